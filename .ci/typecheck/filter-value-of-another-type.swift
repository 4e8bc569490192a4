// Must not type-check: a filter value of another type than the property's.
// expected-error: cannot convert value of type 'String' to expected argument type 'Int'
import CodableSQLite
import Foundation

struct Person: Codable, UUIDModel { let id: UUID; var name: String; var age: Int }
let filter = Filter(\Person.age, is: .greater(than: "foobar"))
