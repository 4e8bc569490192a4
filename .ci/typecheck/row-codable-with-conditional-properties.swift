// Must not type-check: a macro sees no build settings, so it cannot know which properties an #if
// block declares; @RowCodable says so rather than generate code that fails in one configuration.
// expected-error: cannot tell which properties an #if block declares
import CodableSQLite

@RowCodable
struct Event: Codable {
    var id: Int64
    #if DEBUG
    var trace: String?
    #endif
}
