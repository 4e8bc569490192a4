// What the sync's wire types and their checks (Sources/CodableSync/SyncTransport.swift,
// SyncRefusal.swift, SyncValidation.swift) need of the rest of CodableSync, for Fuzz/run, which
// compiles them into the fuzz module without the engine: `SQLite.Sync.Error` with the codes the
// checks throw. (The real one is in Sources/CodableSync/Sync.swift; this one only has to match
// what the checks call.)
import Foundation

extension SQLite {
    enum Sync {
        struct Error: Swift.Error, Sendable, CustomStringConvertible {
            struct Code: Hashable, Sendable {
                let name: String
                init(_ name: String) { self.name = name }
                static let invalidArgument = Code("invalidArgument")
                static let invalidAnswer = Code("invalidAnswer")
            }

            let code: Code
            let message: String
            init(_ code: Code, _ message: String) {
                self.code = code
                self.message = message
            }
            var description: String { "sync: \(message)" }
        }
    }
}
