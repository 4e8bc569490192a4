import Foundation

/// Due dates as people type them, in the local time zone.
enum DueDate {
    static let accepted = "today, tomorrow, yesterday, a weekday (monday…sunday, the next one), "
        + "'in N days' or 'in N weeks', YYYY-MM-DD, or 'YYYY-MM-DD HH:MM'"

    /// A date-only input is the start of that local day; an input with a time is that local time.
    static func parse(_ input: String, now: Date = Date(), calendar: Calendar = .current) throws -> Date {
        let text = input.trimmingCharacters(in: .whitespaces).lowercased()
        let today = calendar.startOfDay(for: now)
        func days(_ count: Int) -> Date? { calendar.date(byAdding: .day, value: count, to: today) }

        var result: Date?
        switch text {
        case "today": result = today
        case "tomorrow": result = days(1)
        case "yesterday": result = days(-1)
        default:
            if let weekday = weekdays.firstIndex(where: { $0 == text || $0.prefix(3) == text }) {
                let current = calendar.component(.weekday, from: today) - 1
                var ahead = (weekday - current + 7) % 7
                if ahead == 0 { ahead = 7 }
                result = days(ahead)
            } else if let relative = relative(text) {
                result = calendar.date(byAdding: relative.unit, value: relative.count, to: today)
            } else {
                result = absolute(text, calendar: calendar)
            }
        }
        guard let result else {
            throw TodoError(description: "Cannot understand the due date '\(input)'. Use \(accepted).")
        }
        return result
    }

    /// `2026-11-23`, or `2026-11-23 14:30` when the time is not midnight.
    static func describe(_ date: Date, calendar: Calendar = .current) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let day = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        if parts.hour == 0 && parts.minute == 0 { return day }
        return day + String(format: " %02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }

    private static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    private static func relative(_ text: String) -> (count: Int, unit: Calendar.Component)? {
        let words = text.split(separator: " ")
        guard words.count == 3, words[0] == "in", let count = Int(words[1]), count >= 0 else { return nil }
        switch words[2] {
        case "day", "days": return (count, .day)
        case "week", "weeks": return (count, .weekOfYear)
        default: return nil
        }
    }

    private static func absolute(_ text: String, calendar: Calendar) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "t" })
        guard (1...2).contains(parts.count) else { return nil }
        let day = parts[0].split(separator: "-").compactMap { Int($0) }
        guard day.count == 3, parts[0].split(separator: "-").count == 3 else { return nil }
        var components = DateComponents(year: day[0], month: day[1], day: day[2], hour: 0, minute: 0)
        if parts.count == 2 {
            let time = parts[1].split(separator: ":").compactMap { Int($0) }
            guard time.count == 2, parts[1].split(separator: ":").count == 2 else { return nil }
            components.hour = time[0]
            components.minute = time[1]
        }
        // Reject dates the calendar would roll over (2026-02-30 is not 2026-03-02).
        guard components.isValidDate(in: calendar), let hour = components.hour, (0..<24).contains(hour),
              let minute = components.minute, (0..<60).contains(minute)
        else { return nil }
        return calendar.date(from: components)
    }
}
