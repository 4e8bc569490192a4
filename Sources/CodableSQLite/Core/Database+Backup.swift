import CSQLite
import Foundation

extension SQLite.Database {
    /// How far an online backup has come.
    ///
    /// Sendable: a value.
    public struct BackupProgress: Sendable, Hashable {
        /// Pages copied so far.
        public var copiedPages: Int
        /// Pages in the database.
        public var totalPages: Int
        /// `copiedPages / totalPages`, from 0 to 1.
        public var fraction: Double { totalPages == 0 ? 1 : Double(copiedPages) / Double(totalPages) }
    }

    /// Copies the database to a file at `path` (replacing what the file held) with SQLite's online
    /// backup API, while other connections keep reading and writing. The copy is the last
    /// committed state when the backup starts.
    ///
    /// ```swift
    /// try db.backup(to: "/backups/app-2026-11-23.sqlite")
    /// ```
    ///
    /// - Throws: ``SQLite/Error`` (`cannotOpen` for a destination that cannot be written).
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func backup(to path: String) throws {
        try withReader { source in try source.backup(to: path, pagesPerStep: -1, progress: nil) }   // -1: every page at once
    }

    /// Asynchronous ``backup(to:)``: copies `pagesPerStep` pages at a time, reports progress after
    /// each step, and stops with `CancellationError` when the task is cancelled (the destination
    /// is then incomplete: delete it).
    ///
    /// ```swift
    /// try await db.backup(to: path) { progress in print(Int(progress.fraction * 100), "%") }
    /// ```
    public func backup(
        to path: String, pagesPerStep: Int = 1024, progress: (@Sendable (BackupProgress) -> Void)? = nil
    ) async throws {
        try await performRead { source in
            try source.backup(to: path, pagesPerStep: Int32(clamping: max(1, pagesPerStep)), progress: progress)
        }
    }

    /// Writes a compacted copy of the database to a new file (`VACUUM INTO`); the database itself
    /// is not changed. The file must not exist.
    ///
    /// ```swift
    /// try db.vacuum(into: "/backups/app-compact.sqlite")
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func vacuum(into path: String) throws {
        try withWriter { connection in _ = try connection.rows("VACUUM INTO ?", arguments: [.text(path)], readOnly: false) }
    }

    /// Asynchronous ``vacuum(into:)``.
    ///
    /// ```swift
    /// try await db.vacuum(into: path)
    /// ```
    public func vacuum(into path: String) async throws {
        try await performWrite { connection in _ = try connection.rows("VACUUM INTO ?", arguments: [.text(path)], readOnly: false) }
    }

    /// Runs SQLite's integrity check and returns every problem it reports: `[]` for a sound
    /// database.
    ///
    /// A damaged file can stop the check part way (SQLite lists what it found, then fails with
    /// `SQLITE_CORRUPT`); the problems found so far are returned, and the error that stopped the
    /// check is the last one:
    ///
    /// ```swift
    /// let problems = try db.checkIntegrity()
    /// if !problems.isEmpty { print("damaged:", problems) }
    /// // ["*** in database main ***\nPage 20: btreeInitPage() returns error code 11",
    /// //  "Page 10: btreeInitPage() returns error code 11",
    /// //  "The check stopped: database disk image is malformed (SQLite error 11)"]
    /// ```
    ///
    /// - Throws: ``SQLite/Error`` only when nothing could be checked: the file is not a database,
    ///   or its header or schema cannot be read (`notADatabase`, `corrupt`); an I/O error or
    ///   another connection's lock before any problem was reported (`ioError`, `busy`); or the
    ///   check was interrupted (`interrupt`; the async form throws `CancellationError`).
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func checkIntegrity() throws -> [String] {
        try withReader { try $0.integrityProblems() }
    }

    /// Asynchronous ``checkIntegrity()``.
    ///
    /// ```swift
    /// let problems = try await db.checkIntegrity()
    /// ```
    public func checkIntegrity() async throws -> [String] {
        try await performRead { try $0.integrityProblems() }
    }
}

extension RawConnection {
    /// `PRAGMA integrity_check`, without its `ok`. When the check stops part way with
    /// `SQLITE_CORRUPT` (the file is damaged, which is the answer), or with another error after
    /// reporting problems, that error is the last problem. A check that cannot start (the schema
    /// unreadable), is interrupted, or fails before reporting anything throws.
    func integrityProblems() throws -> [String] {
        try withStatement("PRAGMA integrity_check") { statement in
            var problems: [String] = []
            do {
                while try statement.step() { problems.append(statement.text(at: 0)) }
            } catch let error as SQLite.Error where error.code != .interrupt && (error.code == .corrupt || !problems.isEmpty) {
                problems.append("The check stopped: \(error.message) (SQLite error \(error.extendedCode.rawValue))")
            }
            return problems == ["ok"] ? [] : problems
        }
    }

    /// Copies this connection's main database to `path`, from one read snapshot.
    func backup(to path: String, pagesPerStep: Int32, progress: (@Sendable (SQLite.Database.BackupProgress) -> Void)?) throws {
        let destination = try RawConnection(path: path, options: RawConnection.Options())
        // One read transaction for the whole copy: every step sees the same snapshot, and (in WAL
        // mode) writers go on meanwhile.
        try inReadTransaction {
            guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
                throw SQLite.Error(connection: destination.handle, resultCode: sqlite3_errcode(destination.handle), sql: nil)
            }
            var resultCode: Int32 = SQLITE_OK
            repeat {
                if let cancellationCheck, cancellationCheck() {
                    sqlite3_backup_finish(backup)
                    throw SQLite.Error(code: .interrupt, message: "interrupted: the task was cancelled")
                }
                resultCode = sqlite3_backup_step(backup, pagesPerStep)
                if resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED { sqlite3_sleep(5) }
                let total = Int(sqlite3_backup_pagecount(backup))
                progress?(.init(copiedPages: total - Int(sqlite3_backup_remaining(backup)), totalPages: total))
            } while resultCode == SQLITE_OK || resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED
            sqlite3_backup_finish(backup)
            guard resultCode == SQLITE_DONE else {
                throw SQLite.Error(connection: destination.handle, resultCode: resultCode, sql: nil)
            }
        }
    }
}
