#if Fluent
import FluentKit
import Foundation

/// The benchmark record as a FluentKit model: Fluent's models are classes with property wrappers,
/// declared field by field. Shared by the SQLite benchmark and `Benchmarks/Postgres` (symlinked).
final class FluentItem: FluentKit.Model, @unchecked Sendable {  // Fluent requires Sendable models; each instance is used by one task at a time
    static let schema = "fluent_item"
    @ID(custom: "id", generatedBy: .user) var id: Int64?
    @Field(key: "title") var title: String
    @OptionalField(key: "note") var note: String?
    @OptionalField(key: "dueDate") var dueDate: Date?
    @Field(key: "isCompleted") var isCompleted: Bool
    @Field(key: "priority") var priority: Int
    @Field(key: "score") var score: Double
    @Field(key: "uuid") var uuid: UUID
    @Field(key: "tags") var tags: [String]
    @Field(key: "createdAt") var createdAt: Date

    init() {}

    init(_ item: Item) {
        id = item.id
        set(item)
    }

    func set(_ item: Item) {
        title = item.title; note = item.note; dueDate = item.dueDate; isCompleted = item.isCompleted
        priority = item.priority; score = item.score; uuid = item.uuid; tags = item.tags; createdAt = item.createdAt
    }

    var item: Item {
        Item(id: id ?? 0, title: title, note: note, dueDate: dueDate, isCompleted: isCompleted, priority: priority,
             score: score, uuid: uuid, tags: tags, createdAt: createdAt)
    }

    /// Creates the table through Fluent's schema builder, with the column types Fluent picks.
    static func createTable(on database: any FluentKit.Database) async throws {
        try await database.schema(schema)
            .field("id", .int64, .identifier(auto: false))
            .field("title", .string, .required).field("note", .string).field("dueDate", .datetime)
            .field("isCompleted", .bool, .required).field("priority", .int, .required).field("score", .double, .required)
            .field("uuid", .uuid, .required).field("tags", .array(of: .string), .required).field("createdAt", .datetime, .required)
            .create()
    }
}
#endif
