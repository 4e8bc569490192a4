// Must not type-check: string rules apply to strings only.
// expected-error: hasPrefix
import CodableSQLite
import Foundation

struct Person: Codable, UUIDModel { let id: UUID; var name: String; var age: Int }
let filter = Filter(\Person.age, is: .hasPrefix("1"))
