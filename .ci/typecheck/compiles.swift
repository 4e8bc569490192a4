// Must type-check: the filters of the models issue, spelled as users write them.
import CodableSQLite
import Foundation

enum EyeColor: String, Codable { case blue, brown }
struct Person: Codable, UUIDModel { let id: UUID; var name: String; var age: Int; var nickname: String?; var eyeColor: EyeColor }

func filters(_ db: SQLite.Database) throws {
    _ = try db.get(with: Filter(\Person.age, is: .greater(than: 17)))
    _ = try db.count(with: Filter(\Person.age, is: .between(15, and: 35)))
    _ = try db.get(with: Filter(\Person.name, is: .hasPrefix("B")).sort(by: \.age, ascending: false).limit(10, page: 2))
    _ = try db.get(with: Filter(\Person.nickname, is: .notEqual(to: nil)).and(\Person.eyeColor, is: .equal(to: .blue)))
}
