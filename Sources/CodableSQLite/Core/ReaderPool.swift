import Foundation

/// Reader connections of a WAL database, opened on demand up to a maximum.
///
/// A caller takes a free connection, or opens one while under the maximum, or waits for one
/// to be returned. Readers never wait for the writer: in WAL mode each read sees the last
/// committed state.
final class ReaderPool: @unchecked Sendable {  // all mutable state is guarded by `condition`
    private let condition = NSCondition()
    private var available: [Connection] = []
    private var openCount = 0
    private let maximumCount: Int
    private let open: () throws -> Connection

    init(maximumCount: Int, open: @escaping () throws -> Connection) {
        self.maximumCount = max(1, maximumCount)
        self.open = open
    }

    func acquire() throws -> Connection {
        condition.lock()
        while available.isEmpty && openCount >= maximumCount {
            condition.wait()
        }
        if let connection = available.popLast() {
            condition.unlock()
            return connection
        }
        openCount += 1
        condition.unlock()
        do {
            return try open()
        } catch {
            condition.lock()
            openCount -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    func release(_ connection: Connection) {
        condition.lock()
        available.append(connection)
        condition.signal()
        condition.unlock()
    }
}
