// Must not type-check: @RowCodable generates for structs only; a class is told so.
// expected-error: @RowCodable applies to a struct
import CodableSQLite

@RowCodable
final class Order: Codable {
    var id: Int64 = 0
}
