import Foundation

/// The list as an aligned text table.
enum TodoTable {
    static func shortID(_ id: String) -> String {
        String(id.prefix(8))
    }

    static func render(_ tasks: [TodoItem], now: Date = Date(), calendar: Calendar = .current) -> String {
        guard !tasks.isEmpty else { return "No tasks. Add one with: todo add \"Buy milk\" --due tomorrow" }
        let today = calendar.startOfDay(for: now)
        let rows: [[String]] = tasks.map { task in
            var due = task.dueDate.map { DueDate.describe($0, calendar: calendar) } ?? "-"
            if let dueDate = task.dueDate, !task.isCompleted, dueDate < today { due += " (overdue)" }
            return [shortID(task.id), task.isCompleted ? "[x]" : "[ ]", due, task.title]
        }
        let header = ["ID", "DONE", "DUE", "TITLE"]
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                column == cells.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        let pending = tasks.filter { !$0.isCompleted }.count
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
            + "\n\n\(tasks.count) task\(tasks.count == 1 ? "" : "s"), \(pending) pending"
    }
}
