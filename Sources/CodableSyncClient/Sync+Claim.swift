import CodableSQLite
import CodableSyncProtocol
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SQLite.Sync {
    /// The right to sync one database file, held while a ``run()`` or ``sync()`` works.
    struct Claim {
        let flag: Locked<Bool>
        let file: FileClaim?

        func release() {
            file?.release()
            flag.withLock { $0 = false }
        }
    }

    /// An exclusive `flock` on `<database path>.sync-lock`: a second sync of the same file, by
    /// another `Sync` or another process, is refused rather than pushing the same outbox twice.
    /// The system drops it when the process ends, however it ends. In-memory databases have no
    /// file, and no other process can open them; a database opened by a `file:` URI gets the
    /// in-process check only.
    final class FileClaim: Sendable {
        let descriptor: Int32

        init?(databasePath path: String) throws {
            guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return nil }
            let lockPath = path + ".sync-lock"
            let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw SyncError(.lockFailed, "cannot open \(lockPath) to claim the sync: \(String(cString: strerror(errno)))")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let reason = errno
                close(descriptor)
                if reason == EWOULDBLOCK {
                    throw SyncError(.alreadyRunning, "another sync of \(path) is running (in this process or another): \(lockPath) is locked")
                }
                throw SyncError(.lockFailed, "cannot lock \(lockPath): \(String(cString: strerror(reason)))")
            }
            self.descriptor = descriptor
        }

        func release() {
            _ = flock(descriptor, LOCK_UN)
            close(descriptor)
        }
    }
}
