import Foundation
@testable import CodableSQLite

enum EyeColor: String, Codable, Sendable { case blue, brown, green }

#if Macros
@RowCodable
#endif
struct Person: Codable, UUIDModel, Equatable, Sendable {
    let id: UUID
    var name: String
    var age: Int
    var nickname: String?
    var eyeColor: EyeColor

    init(_ name: String, age: Int, nickname: String? = nil, eyeColor: EyeColor = .brown, id: UUID = UUID()) {
        self.id = id
        self.name = name
        self.age = age
        self.nickname = nickname
        self.eyeColor = eyeColor
    }

    static var indexes: [ModelIndex<Person>] { [.index(\.age)] }
}

#if Macros
@RowCodable
#endif
struct Note: Codable, Model, Equatable, Sendable {
    var id: Int64?
    var text: String
}

#if Macros
@RowCodable
#endif
struct Address: Codable, Equatable, Sendable {
    var city: String
    var zip: Int
}

#if Macros
@RowCodable
#endif
struct Customer: Codable, Model, Equatable, Sendable {
    var id: String
    var address: Address
    var joined: Date
    var tags: [String]
}

/// A fresh database for one test: in memory, or a unique file (tests run in parallel).
enum ModelFixtures {
    static func memory() throws -> SQLite.Database {
        try SQLite.Database(path: ":memory:")
    }

    static func file() throws -> SQLite.Database {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("codablesqlite-models-\(UUID().uuidString).sqlite").path
        return try SQLite.Database(path: path)
    }

    static let people = [
        Person("Billy", age: 20, eyeColor: .brown),
        Person("Bob", age: 15, nickname: "B", eyeColor: .blue),
        Person("Carol", age: 40, eyeColor: .blue),
        Person("Dave", age: 35, nickname: "D", eyeColor: .green),
    ]
}
