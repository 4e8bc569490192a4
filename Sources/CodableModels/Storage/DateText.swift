import Foundation

/// Dates as SQLite-compatible text: `YYYY-MM-DD HH:MM:SS[.fraction]`, UTC, no zone designator.
///
/// - The layout is the one SQLite's own `datetime()` writes, so stored dates compare correctly
///   with `datetime('now')` and work with every date function.
/// - Fixed-width fields and no trailing `Z` make text order chronological order.
/// - The fraction has exactly the digits of the shortest decimal that identifies the `Date`'s
///   `Double` value, so decoding gives back the identical `Date`.
@usableFromInline package enum DateText {
    /// Seconds from 2001-01-01 (the `Date` reference) to 0000-01-01 00:00:00 and to 10000-01-01:
    /// the years SQLite's date functions handle. (`Date.distantPast`, Foundation's 0001-01-01 in the
    /// Julian calendar, is 0000-12-30 in the proleptic Gregorian calendar SQLite uses.)
    @usableFromInline package static let earliestSeconds: Int64 = (daysFromCivil(year: 0, month: 1, day: 1) - referenceDay) * 86_400
    @usableFromInline package static let endSeconds: Int64 = (daysFromCivil(year: 10_000, month: 1, day: 1) - referenceDay) * 86_400
    /// 2001-01-01 as a day number from 1970-01-01.
    @usableFromInline package static let referenceDay: Int64 = 11_323

    // MARK: Formatting

    /// The text for `date`, or `nil` when it is not finite or outside years 0–9999.
    @usableFromInline package static func format(_ date: Date) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, interval >= Double(earliestSeconds), interval < Double(endSeconds) else { return nil }
        // Most dates are whole milliseconds. When `interval` is the Double nearest to a count of
        // milliseconds, that decimal (its zeros trimmed) is also the shortest one identifying it:
        // in years 0–9999 a Double's spacing is under 0.0001 s, so any other decimal of at most
        // three places is another Double. Integer arithmetic then gives the same text as the
        // general path below, which prints the Double's shortest decimal.
        let milliseconds = (interval * 1000).rounded()
        if milliseconds / 1000 == interval {
            let total = Int64(milliseconds)
            let wholeSeconds = floorDivide(total, 1000)
            var fraction = total - wholeSeconds * 1000
            var places = 3
            while places > 0 && fraction % 10 == 0 {
                fraction /= 10
                places -= 1
            }
            return text(wholeSeconds: wholeSeconds, fractionLength: 4) { bytes, index in
                guard places > 0 else { return }
                bytes[index] = UInt8(ascii: ".")
                var value = fraction
                for place in stride(from: places, to: 0, by: -1) {
                    bytes[index + place] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                index += places + 1
            }
        }
        guard let (wholeSeconds, fraction) = split(interval) else { return nil }
        return text(wholeSeconds: wholeSeconds, fractionLength: fraction.count + 1) { bytes, index in
            guard !fraction.isEmpty else { return }
            bytes[index] = UInt8(ascii: ".")
            for (offset, digit) in fraction.enumerated() { bytes[index + 1 + offset] = digit }
            index += fraction.count + 1
        }
    }

    /// `YYYY-MM-DD HH:MM:SS` for `wholeSeconds` from the reference date, then what `fraction`
    /// writes at the index it is given (advancing it; at most `fractionLength` bytes), built in
    /// one buffer.
    private static func text(
        wholeSeconds: Int64, fractionLength: Int, fraction: (UnsafeMutableBufferPointer<UInt8>, inout Int) -> Void
    ) -> String {
        let days = floorDivide(wholeSeconds, 86_400)
        let secondOfDay = wholeSeconds - days * 86_400
        let (year, month, day) = civilFromDays(days + referenceDay)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 19 + fractionLength) { bytes in
            var index = 0
            func put(_ value: Int64, _ count: Int, then separator: UInt8?) {
                var remainder = value
                for place in stride(from: count - 1, through: 0, by: -1) {
                    bytes[index + place] = UInt8(ascii: "0") + UInt8(remainder % 10)
                    remainder /= 10
                }
                index += count
                if let separator {
                    bytes[index] = separator
                    index += 1
                }
            }
            put(year, 4, then: UInt8(ascii: "-"))
            put(month, 2, then: UInt8(ascii: "-"))
            put(day, 2, then: UInt8(ascii: " "))
            put(secondOfDay / 3600, 2, then: UInt8(ascii: ":"))
            put(secondOfDay / 60 % 60, 2, then: UInt8(ascii: ":"))
            put(secondOfDay % 60, 2, then: nil)
            fraction(bytes, &index)
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<index]), as: UTF8.self)
        }
    }

    /// Splits `value` exactly into `floor(value)` and the decimal digits of `value - floor(value)`,
    /// using the shortest decimal that converts back to `value`.
    @usableFromInline package static func split(_ value: Double) -> (whole: Int64, fraction: [UInt8])? {
        // Swift prints the shortest round-tripping decimal: "817040730.1234567", "-0.3", "1e-20", "2.5e+16".
        let text = value.description.utf8
        var negative = false
        var digits: [UInt8] = []
        digits.reserveCapacity(24)
        var pointPosition: Int?
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        for byte in text {
            switch byte {
            case UInt8(ascii: "-") where !inExponent: negative = true
            case UInt8(ascii: "-"): exponentNegative = true
            case UInt8(ascii: "+"): break
            case UInt8(ascii: "."): pointPosition = digits.count
            case UInt8(ascii: "e"), UInt8(ascii: "E"): inExponent = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if inExponent {
                    exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
                } else {
                    digits.append(byte)
                }
            default: return nil
            }
        }
        // value = 0.digits × 10^point
        let point = (pointPosition ?? digits.count) + (exponentNegative ? -exponent : exponent)
        var integer: Int64 = 0
        var fraction: [UInt8] = []
        if point > 0 {
            guard point <= 15 else { return nil }  // far outside years 1–9999
            for index in 0..<point {
                let digit = index < digits.count ? Int64(digits[index] - UInt8(ascii: "0")) : 0
                integer = integer * 10 + digit
            }
            if point < digits.count { fraction = Array(digits[point...]) }
        } else {
            fraction = [UInt8](repeating: UInt8(ascii: "0"), count: -point) + digits
        }
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        if !negative { return (integer, fraction) }
        if fraction.isEmpty { return (-integer, []) }
        // -(I + 0.F) = -(I + 1) + (1 - 0.F): the ten's complement of the fraction digits.
        var complement = fraction
        let last = complement.count - 1
        for index in 0...last {
            let digit = complement[index] - UInt8(ascii: "0")
            complement[index] = UInt8(ascii: "0") + (index == last ? 10 - digit : 9 - digit)
        }
        return (-(integer + 1), complement)
    }

    /// The text of `text`'s date at the nearest microsecond, for an engine that keeps microseconds
    /// (PostgreSQL's `timestamp with time zone`): rounded, not cut, so that dates a microsecond
    /// apart stay apart and each keeps the microsecond nearest to it (`…28.5235836` is
    /// `…28.523584`, where a cut made it `…28.523583`). The decimal digits are rounded as text:
    /// they are the shortest decimal that identifies the `Date`'s `Double`, and arithmetic on
    /// that `Double` (a product by a million) can land on a half and round the wrong way. `text`
    /// when it has at most six decimals.
    package static func microsecondText(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard let point = bytes.firstIndex(of: UInt8(ascii: ".")), bytes.count - point - 1 > 6,
              bytes[(point + 1)...].allSatisfy(isDigit) else { return text }
        let whole = String(decoding: bytes[..<point], as: UTF8.self)
        let kept = String(decoding: bytes[(point + 1)...(point + 6)], as: UTF8.self)
        guard bytes[point + 7] >= UInt8(ascii: "5") else { return whole + "." + kept }
        guard let micros = Int(kept), micros + 1 < 1_000_000 else {
            // .9999995 and up: the next whole second.
            guard let seconds = Array(whole.utf8).withUnsafeBufferPointer({ parse($0) }),
                  let next = format(seconds.addingTimeInterval(1)) else { return text }
            return next
        }
        let digits = String(micros + 1)
        return whole + "." + String(repeating: "0", count: 6 - digits.count) + digits
    }

    // MARK: Parsing

    /// Parses every text form SQLite's date functions accept:
    /// `YYYY-MM-DD`, `YYYY-MM-DD HH:MM`, `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DD HH:MM:SS.SSS…`, the same
    /// with `T` instead of the space, `HH:MM[:SS[.SSS…]]` alone (on 2000-01-01), each optionally
    /// followed by `Z` or a `±HH:MM` offset. Returns `nil` for anything else.
    @usableFromInline package static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        if let date = parseWritten(text) { return date }
        var scanner = Scanner(bytes: text)
        scanner.skipSpaces()
        var year: Int64 = 2000, month: Int64 = 1, day: Int64 = 1
        var hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0
        var fraction: UnsafeBufferPointer<UInt8>.SubSequence = text[text.startIndex..<text.startIndex]

        let hasDate = scanner.peek(offset: 4) == UInt8(ascii: "-")
        if hasDate {
            guard let y = scanner.number(digits: 4), scanner.consume(UInt8(ascii: "-")),
                  let m = scanner.number(digits: 2), scanner.consume(UInt8(ascii: "-")),
                  let d = scanner.number(digits: 2), (1...12).contains(m), (1...31).contains(d)
            else { return nil }
            (year, month, day) = (y, m, d)
        }
        var hasTime = !hasDate
        if hasDate, let separator = scanner.peek(), separator == UInt8(ascii: " ") || separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t"),
           let next = scanner.peek(offset: 1), isDigit(next) {
            scanner.advance()
            hasTime = true
        }
        if hasTime {
            guard let h = scanner.number(digits: 2), scanner.consume(UInt8(ascii: ":")),
                  let mi = scanner.number(digits: 2), h < 24, mi < 60
            else { return nil }
            (hour, minute) = (h, mi)
            if scanner.consume(UInt8(ascii: ":")) {
                guard let s = scanner.number(digits: 2), s < 60 else { return nil }
                second = s
                if scanner.consume(UInt8(ascii: ".")) {
                    fraction = scanner.digits()
                    guard !fraction.isEmpty else { return nil }
                }
            }
        }
        scanner.skipSpaces()
        var offsetSeconds: Int64 = 0
        if let byte = scanner.peek() {
            if byte == UInt8(ascii: "Z") || byte == UInt8(ascii: "z") {
                scanner.advance()
            } else if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
                scanner.advance()
                guard let h = scanner.number(digits: 2), h <= 14 else { return nil }
                _ = scanner.consume(UInt8(ascii: ":"))
                guard let m = scanner.number(digits: 2), m < 60 else { return nil }
                offsetSeconds = (h * 3600 + m * 60) * (byte == UInt8(ascii: "-") ? -1 : 1)
            }
        }
        scanner.skipSpaces()
        guard scanner.isAtEnd else { return nil }

        let days = daysFromCivil(year: year, month: month, day: day) - referenceDay
        let whole = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSinceReferenceDate: seconds(whole: whole, fraction: fraction))
    }

    /// The form this library writes, `YYYY-MM-DD HH:MM:SS[.fraction]`, read at fixed positions: the
    /// date the general parser gives it, or `nil` for any other text (which that parser then
    /// reads), so that a stored date costs no scanning.
    @inline(__always)
    private static func parseWritten(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        let count = text.count
        guard count >= 19, let base = text.baseAddress, base[4] == UInt8(ascii: "-"), base[7] == UInt8(ascii: "-"),
              base[10] == UInt8(ascii: " "), base[13] == UInt8(ascii: ":"), base[16] == UInt8(ascii: ":")
        else { return nil }
        @inline(__always) func pair(_ at: Int) -> Int64? {
            let tens = base[at] &- UInt8(ascii: "0"), ones = base[at + 1] &- UInt8(ascii: "0")
            return tens < 10 && ones < 10 ? Int64(tens) * 10 + Int64(ones) : nil
        }
        guard let century = pair(0), let yearOfCentury = pair(2), let month = pair(5), let day = pair(8),
              let hour = pair(11), let minute = pair(14), let second = pair(17),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = text[19..<19]
        if count > 19 {
            guard base[19] == UInt8(ascii: "."), count > 20 else { return nil }
            for index in 20..<count where base[index] &- UInt8(ascii: "0") >= 10 { return nil }
            fraction = text[20..<count]
        }
        let days = daysFromCivil(year: century * 100 + yearOfCentury, month: month, day: day) - referenceDay
        return Date(timeIntervalSinceReferenceDate: seconds(whole: days * 86_400 + hour * 3600 + minute * 60 + second, fraction: fraction))
    }

    /// The `Date` a count of microseconds from 2000-01-01 00:00 UTC (PostgreSQL's binary
    /// `timestamp with time zone`) stands for: the one its `YYYY-MM-DD HH:MM:SS.ffffff` text
    /// parses to, or `nil` outside years 0–9999 (PostgreSQL's `infinity` included).
    ///
    /// Both are the `Double` nearest to the same exact decimal, so a read that decodes the binary
    /// form gives the identical `Date` a read of the text did.
    package static func date(microsecondsSince2000 microseconds: Int64) -> Date? {
        // 2000-01-01 is 366 days before the reference date.
        let (total, overflow) = microseconds.subtractingReportingOverflow(366 * 86_400 * 1_000_000)
        guard !overflow else { return nil }
        let whole = floorDivide(total, 1_000_000)
        guard whole >= earliestSeconds, whole < endSeconds else { return nil }
        // An exact integer divided by an exact power of ten is rounded once, as `seconds` does.
        if total.magnitude <= 1 << 53 { return Date(timeIntervalSinceReferenceDate: Double(total) / 1_000_000) }
        var fraction = total - whole * 1_000_000
        var digits = [UInt8](repeating: UInt8(ascii: "0"), count: 6)
        for index in stride(from: 5, through: 0, by: -1) {
            digits[index] = UInt8(ascii: "0") + UInt8(fraction % 10)
            fraction /= 10
        }
        return digits.withUnsafeBufferPointer { Date(timeIntervalSinceReferenceDate: seconds(whole: whole, fraction: $0[...])) }
    }

    /// The `Double` nearest to the exact decimal `whole + 0.fraction`.
    @usableFromInline package static func seconds(whole: Int64, fraction: UnsafeBufferPointer<UInt8>.SubSequence) -> Double {
        var digits = fraction
        while digits.last == UInt8(ascii: "0") { digits = digits.dropLast() }
        if digits.isEmpty { return Double(whole) }
        // Exact integers below 2^53 divided by an exact power of ten round correctly (one IEEE division).
        if digits.count <= 15 {
            var numerator: Int64 = 0
            for digit in digits { numerator = numerator * 10 + Int64(digit - UInt8(ascii: "0")) }
            let scale = powersOfTen[digits.count]
            let (scaled, overflow) = whole.multipliedReportingOverflow(by: Int64(scale))
            if !overflow {
                let (total, overflow) = scaled.addingReportingOverflow(numerator)
                if !overflow, total.magnitude <= 1 << 53 {
                    return Double(total) / scale
                }
            }
        }
        // Otherwise let the correctly rounded decimal parser do it.
        var text: String
        if whole >= 0 {
            text = "\(whole)." + String(decoding: digits, as: UTF8.self)
        } else {
            // whole + 0.F = -((|whole| - 1) + (1 - 0.F))
            var complement = Array(digits)
            let last = complement.count - 1
            for index in 0...last {
                let digit = complement[index] - UInt8(ascii: "0")
                complement[index] = UInt8(ascii: "0") + (index == last ? 10 - digit : 9 - digit)
            }
            text = "-\(-whole - 1)." + String(decoding: complement, as: UTF8.self)
        }
        return Double(text) ?? Double(whole)
    }

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, after H. Hinnant's public-domain algorithms)

    @usableFromInline package static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    @usableFromInline package static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position: Int

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        var isAtEnd: Bool { position >= bytes.endIndex }

        func peek(offset: Int = 0) -> UInt8? {
            position + offset < bytes.endIndex ? bytes[position + offset] : nil
        }

        mutating func advance() { position += 1 }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            position += 1
            return true
        }

        mutating func skipSpaces() {
            while let byte = peek(), byte == UInt8(ascii: " ") { position += 1 }
        }

        /// Exactly `digits` decimal digits.
        mutating func number(digits: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<digits {
                guard let byte = peek(), DateText.isDigit(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                position += 1
            }
            return value
        }

        /// The run of digits at the current position.
        mutating func digits() -> UnsafeBufferPointer<UInt8>.SubSequence {
            let start = position
            while let byte = peek(), DateText.isDigit(byte) { position += 1 }
            return bytes[start..<position]
        }
    }
}
