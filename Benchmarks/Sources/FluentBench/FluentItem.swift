#if Fluent
internal import FluentKit
internal import Foundation

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

    init(_ record: FluentRecord) {
        id = record.id
        set(record)
    }

    func set(_ record: FluentRecord) {
        title = record.title; note = record.note; dueDate = record.dueDate.map(Date.init(timeIntervalSince1970:))
        isCompleted = record.isCompleted; priority = record.priority; score = record.score
        uuid = withUnsafeBytes(of: (record.uuid.high.bigEndian, record.uuid.low.bigEndian)) { raw in
            UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                        raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
        }
        tags = record.tags; createdAt = Date(timeIntervalSince1970: record.createdAt)
    }

    var record: FluentRecord {
        let halves = withUnsafeBytes(of: uuid.uuid) { raw in
            (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self).bigEndian, raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian)
        }
        return FluentRecord(
            id: id ?? 0, title: title, note: note, dueDate: dueDate?.timeIntervalSince1970, isCompleted: isCompleted, priority: priority,
            score: score, uuid: halves, tags: tags, createdAt: createdAt.timeIntervalSince1970)
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
