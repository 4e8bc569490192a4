import Foundation

extension SQLite.Database {
    /// Where a database lives and how its connections behave.
    ///
    /// ```swift
    /// var configuration = SQLite.Database.Configuration(directory: folder, filename: "MyAppData")
    /// configuration.busyTimeout = 10
    /// let db = try SQLite.Database(configuration)   // folder/MyAppData.sqlite
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// The folder of the database file; `nil` for a configuration made from a path.
        public var directory: URL?
        /// The file name inside ``directory``. A name without an extension gets `.sqlite`.
        public var filename: String
        /// How long a statement waits for a lock held by another process before failing with
        /// ``SQLite/ResultCode/busy``, in seconds. Default: 5.
        public var busyTimeout: TimeInterval = 5
        /// The most reader connections opened at once for a file database. Default: 4.
        public var maximumReaderCount: Int = 4
        /// Opens the database read-only: every write fails with ``SQLite/ResultCode/readOnly``.
        public var isReadOnly: Bool = false
        /// Enforces `FOREIGN KEY` constraints (`PRAGMA foreign_keys`). Default: `true`.
        public var foreignKeysEnabled: Bool = true
        /// What a committed transaction survives (file databases in WAL mode). Default:
        /// ``Durability/processCrash``.
        public var durability: Durability = .processCrash
        /// How much of a database file each connection reads through memory-mapped I/O, in bytes
        /// (`PRAGMA mmap_size`); 0, or a negative value, reads everything with `read()`.
        /// Default: 256 MiB on macOS and Linux, 0 on iOS, tvOS, watchOS and visionOS.
        ///
        /// ```swift
        /// configuration.memoryMapSize = 0   // no memory-mapped reads
        /// ```
        ///
        /// A page read through the map is not copied into the connection's page cache, which
        /// makes lookups in a file larger than that cache (2 MB) cheaper. SQLite maps the file
        /// read-only and still writes with `write()`, so a stray write cannot reach the file.
        /// SQLite caps the size at its compile-time maximum (`SQLITE_MAX_MMAP_SIZE`, which some
        /// builds set to 0: no map), and reads with `read()` when the operating system refuses
        /// the map. Pages still in the WAL file are read from it as before.
        ///
        /// The cost: an I/O error on a mapped page stops the process (`SIGBUS`) where `read()`
        /// would have failed the statement with ``SQLite/ResultCode/ioError``. Keep it at 0 for
        /// files on storage that can fail or vanish (a network share, removable media), for a file
        /// something other than SQLite may truncate, and on Apple devices for files whose data
        /// protection makes them unreadable while the device is locked (why it is 0 there by
        /// default).
        public var memoryMapSize: Int = Self.defaultMemoryMapSize

        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        static let defaultMemoryMapSize = 0
        #else
        static let defaultMemoryMapSize = 256 << 20
        #endif

        private var explicitPath: String?

        /// A database file named `filename` in `directory`, which is created when missing.
        ///
        /// ```swift
        /// let configuration = SQLite.Database.Configuration(directory: folder, filename: "MyAppData")
        /// configuration.path   // "<folder>/MyAppData.sqlite"
        /// ```
        ///
        /// - Parameters:
        ///   - directory: The folder; by default ``defaultDirectory``.
        ///   - filename: The file name; by default `database.sqlite`. `.sqlite` is appended to a
        ///     name without an extension.
        public init(directory: URL? = nil, filename: String = "database.sqlite") {
            self.directory = directory ?? Self.defaultDirectory
            self.filename = filename
        }

        /// A database at an exact path: a file path, `":memory:"`, or a `file:` URI. Missing
        /// folders are not created.
        ///
        /// ```swift
        /// let configuration = SQLite.Database.Configuration(path: ":memory:")
        /// ```
        public init(path: String) {
            directory = nil
            filename = (path as NSString).lastPathComponent
            explicitPath = path
        }

        /// The path SQLite opens.
        public var path: String {
            if let explicitPath { return explicitPath }
            let name = (filename as NSString).pathExtension.isEmpty ? filename + ".sqlite" : filename
            let folder = directory ?? Self.defaultDirectory
            return folder.appendingPathComponent(name, isDirectory: false).path
        }

        /// The folder to create before opening, if any.
        var directoryToCreate: URL? {
            explicitPath == nil ? (directory ?? Self.defaultDirectory) : nil
        }

        /// The platform's folder for this program's data:
        /// `Application Support/<bundle identifier or program name>/` on Apple platforms;
        /// `$XDG_DATA_HOME/<program name>/` on Linux, or `~/.local/share/<program name>/`
        /// when `XDG_DATA_HOME` is unset or not absolute.
        ///
        /// ```swift
        /// SQLite.Database.Configuration.defaultDirectory.path   // "/home/me/.local/share/todo"
        /// ```
        public static var defaultDirectory: URL {
            defaultDirectory(environment: ProcessInfo.processInfo.environment, programName: programName)
        }

        static var programName: String {
            #if canImport(Darwin)
            if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return identifier }
            #endif
            let name = ProcessInfo.processInfo.processName
            return name.isEmpty ? "CodableSQLite" : name
        }

        static func defaultDirectory(environment: [String: String], programName: String) -> URL {
            #if canImport(Darwin)
            // macOS, iOS, tvOS, watchOS and visionOS all have Application Support in the user domain.
            let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? homeDirectory.appendingPathComponent("Library/Application Support", isDirectory: true)
            #else
            let base: URL
            if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
                base = URL(fileURLWithPath: xdg, isDirectory: true)
            } else {
                let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? homeDirectory.path
                base = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".local/share", isDirectory: true)
            }
            #endif
            return base.appendingPathComponent(programName, isDirectory: true)
        }

        /// The user's home folder; on iOS, tvOS and watchOS the app's container.
        ///
        /// `NSHomeDirectory()` exists on every platform Foundation supports, unlike
        /// `FileManager.homeDirectoryForCurrentUser`, which is macOS-only among Apple platforms.
        static var homeDirectory: URL {
            URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true)
        }
    }
}

extension SQLite.Database {
    /// What a committed transaction survives, which decides how often SQLite waits for the disk
    /// (`PRAGMA synchronous` in WAL mode).
    ///
    /// ```swift
    /// var configuration = SQLite.Database.Configuration(path: path)
    /// configuration.durability = .powerLoss   // for data that must survive a power cut
    /// ```
    ///
    /// Sendable: a value.
    public enum Durability: Sendable, Hashable {
        /// The default (`synchronous = NORMAL`): a committed transaction survives the process
        /// being killed or crashing; a power loss or an operating-system crash can lose the last
        /// transactions committed before it (never corrupt the database). Commits do not wait for
        /// the disk.
        case processCrash
        /// `synchronous = FULL`: a committed transaction also survives a power loss or an
        /// operating-system crash; each commit waits for the disk to confirm the write.
        case powerLoss

        /// The `PRAGMA synchronous` value.
        var pragmaValue: String {
            switch self {
            case .processCrash: "NORMAL"
            case .powerLoss: "FULL"
            }
        }
    }
}
