// Must not type-check: a type that decodes itself (init(from:)) would not run its own code on the
// generated path, so @RowCodable refuses it and says why.
// expected-error: has its own init(from:), which the generated code would not run
import CodableSQLite

@RowCodable
struct Order: Codable {
    var id: Int64
    init(from decoder: any Decoder) throws {
        id = try decoder.singleValueContainer().decode(Int64.self)
    }
}
