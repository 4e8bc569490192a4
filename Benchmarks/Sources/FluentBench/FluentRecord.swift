#if Fluent
/// The benchmark record as the Fluent contender takes and gives it, in the standard library's
/// types only (dates as seconds since 1970, the UUID as its two halves): this module's interface
/// must not name Foundation, which is not built for library evolution on Linux (see
/// FluentContender.swift). `bench` converts it to and from its `Item` outside the timings.
public struct FluentRecord: Codable, Equatable, Sendable {
    public var id: Int64
    public var title: String
    public var note: String?
    public var dueDate: Double?
    public var isCompleted: Bool
    public var priority: Int
    public var score: Double
    public var uuid: (high: UInt64, low: UInt64)
    public var tags: [String]
    public var createdAt: Double

    public init(
        id: Int64, title: String, note: String?, dueDate: Double?, isCompleted: Bool, priority: Int, score: Double,
        uuid: (high: UInt64, low: UInt64), tags: [String], createdAt: Double
    ) {
        self.id = id
        self.title = title
        self.note = note
        self.dueDate = dueDate
        self.isCompleted = isCompleted
        self.priority = priority
        self.score = score
        self.uuid = uuid
        self.tags = tags
        self.createdAt = createdAt
    }

    public static func == (a: FluentRecord, b: FluentRecord) -> Bool {
        a.id == b.id && a.title == b.title && a.note == b.note && a.dueDate == b.dueDate && a.isCompleted == b.isCompleted
            && a.priority == b.priority && a.score == b.score && a.uuid == b.uuid && a.tags == b.tags && a.createdAt == b.createdAt
    }

    private enum CodingKeys: String, CodingKey {
        case id, title, note, dueDate, isCompleted, priority, score, uuidHigh, uuidLow, tags, createdAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(Int64.self, forKey: .id), title: try c.decode(String.self, forKey: .title),
            note: try c.decodeIfPresent(String.self, forKey: .note), dueDate: try c.decodeIfPresent(Double.self, forKey: .dueDate),
            isCompleted: try c.decode(Bool.self, forKey: .isCompleted), priority: try c.decode(Int.self, forKey: .priority),
            score: try c.decode(Double.self, forKey: .score),
            uuid: (try c.decode(UInt64.self, forKey: .uuidHigh), try c.decode(UInt64.self, forKey: .uuidLow)),
            tags: try c.decode([String].self, forKey: .tags), createdAt: try c.decode(Double.self, forKey: .createdAt))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(title, forKey: .title)
        try c.encodeIfPresent(note, forKey: .note)
        try c.encodeIfPresent(dueDate, forKey: .dueDate)
        try c.encode(isCompleted, forKey: .isCompleted)
        try c.encode(priority, forKey: .priority)
        try c.encode(score, forKey: .score)
        try c.encode(uuid.high, forKey: .uuidHigh)
        try c.encode(uuid.low, forKey: .uuidLow)
        try c.encode(tags, forKey: .tags)
        try c.encode(createdAt, forKey: .createdAt)
    }
}
#endif
