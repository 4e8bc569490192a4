import Foundation

/// Parsers that read SQLite's bytes in place, without building intermediate strings.
@usableFromInline package enum ValueParsing {
    /// A UUID from its 36-character text, upper or lower case.
    @usableFromInline package static func uuid(_ bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == 36, let text = bytes.baseAddress, text[8] == UInt8(ascii: "-"), text[13] == UInt8(ascii: "-"),
              text[18] == UInt8(ascii: "-"), text[23] == UInt8(ascii: "-")
        else { return nil }
        // Each byte from its two digits, at their fixed places in the groups 8-4-4-4-12.
        var invalid: UInt8 = 0
        @inline(__always) func byte(_ at: Int) -> UInt8 {
            let high = hexValue(text[at]), low = hexValue(text[at + 1])
            invalid |= (high | low) & 0xF0
            return high << 4 | (low & 0x0F)
        }
        let uuid: uuid_t = (byte(0), byte(2), byte(4), byte(6), byte(9), byte(11), byte(14), byte(16),
                            byte(19), byte(21), byte(24), byte(26), byte(28), byte(30), byte(32), byte(34))
        return invalid == 0 ? UUID(uuid: uuid) : nil
    }

    /// A UUID from a 16-byte blob.
    @usableFromInline package static func uuid(blob: Data) -> UUID? {
        guard blob.count == 16 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { output in
            for (index, byte) in blob.enumerated() { output[index] = byte }
        }
        return UUID(uuid: uuid)
    }

    /// A hexadecimal digit's value, or a value of 16 or more for any other byte.
    @inline(__always)
    private static func hexValue(_ byte: UInt8) -> UInt8 {
        let digit = byte &- UInt8(ascii: "0")
        if digit < 10 { return digit }
        let letter = (byte | 0x20) &- UInt8(ascii: "a")  // either case
        return letter < 6 ? letter + 10 : 0xFF
    }

    /// A decimal number written `-12.50`, `3`, `1e-7`: the whole text, nothing else.
    @usableFromInline package static func decimal(_ text: String) -> Decimal? {
        var sawDigit = false
        var state = 0  // 0 sign/int, 1 fraction, 2 exponent sign, 3 exponent digits, 4 exponent digit needed
        for (offset, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
                if state == 2 || state == 4 { state = 3 }
            case UInt8(ascii: "-"), UInt8(ascii: "+"):
                guard offset == 0 || state == 2 else { return nil }
                if state == 2 { state = 4 }
            case UInt8(ascii: "."):
                guard state == 0 else { return nil }
                state = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard state <= 1, sawDigit else { return nil }
                state = 2
            default:
                return nil
            }
        }
        guard sawDigit, state != 2, state != 4,
              let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN
        else { return nil }  // NaN: an exponent beyond Decimal's range
        return decimal
    }
}

extension ValueParsing {
    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// `uuidString`'s text (upper case, with dashes), without the per-byte `snprintf` Foundation uses.
    @usableFromInline package static func text(of uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { buffer in
                var output = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[output] = UInt8(ascii: "-")
                        output += 1
                    }
                    buffer[output] = hexDigits[Int(bytes[index] >> 4)]
                    buffer[output + 1] = hexDigits[Int(bytes[index] & 0x0F)]
                    output += 2
                }
                return 36
            }
        }
    }
}
