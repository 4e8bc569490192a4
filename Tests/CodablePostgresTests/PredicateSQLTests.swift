import CodableSQLite
import Foundation
import Testing
#if Postgres
import CodablePostgres
#endif

/// What each translated `#Predicate` operator becomes in each engine's SQL (snapshots: a change
/// in the translation shows here first), read through `sql(for:)`.
@Suite("Queries: the SQL each #Predicate operator becomes")
struct PredicateSQLTests {
    typealias Film = PredicatesOnBothBackendsTests.Film

    /// Each operator: its predicate, then the clauses on SQLite and on PostgreSQL.
    static func cases() -> [(String, Filter<Film>, String, String)] {
        let names = ["Alien", "Zed"]
        let genre = PredicatesOnBothBackendsTests.Genre.drama
        var list: [(String, Filter<Film>, String, String)] = []
        list.append(("comparison", Filter(#Predicate<Film> { $0.year > 2000 }),
                    #"WHERE ("Film"."year" > ?)"#,
                    #"WHERE ("Film"."year" > $1::bigint)"#))
        list.append(("== nil", Filter(#Predicate<Film> { $0.rating == nil }),
                    #"WHERE ("Film"."rating" IS NULL)"#,
                    #"WHERE ("Film"."rating" IS NULL)"#))
        list.append(("!= optional", Filter(#Predicate<Film> { $0.note != "x" }),
                    #"WHERE ("Film"."note" IS NOT ?)"#,
                    #"WHERE ("Film"."note" IS DISTINCT FROM $1::text)"#))
        list.append(("! ||", Filter(#Predicate<Film> { !$0.seen || $0.year <= 1999 }),
                    #"WHERE ((NOT ("Film"."seen" = TRUE)) OR ("Film"."year" <= ?))"#,
                    #"WHERE ((NOT ("Film"."seen" = TRUE)) OR ("Film"."year" <= $1::bigint))"#))
        list.append(("??", Filter(#Predicate<Film> { ($0.rating ?? 0) >= 5 }),
                    #"WHERE (COALESCE("Film"."rating", ?) >= ?)"#,
                    #"WHERE (COALESCE("Film"."rating", $1::double precision) >= $2::double precision)"#))
        list.append(("flatMap", Filter(#Predicate<Film> { $0.rating.flatMap { $0 * 2 } == 4 }),
                    #"WHERE ((CASE WHEN "Film"."rating" IS NULL THEN NULL ELSE ("Film"."rating" * ?) END) IS ?)"#,
                    #"WHERE ((CASE WHEN "Film"."rating" IS NULL THEN NULL ELSE ("Film"."rating" * $1::double precision) END) IS NOT DISTINCT FROM $2::double precision)"#))
        list.append(("contains text", Filter(#Predicate<Film> { $0.title.contains("50%") }),
                    #"WHERE (instr("Film"."title", ?) > 0)"#,
                    #"WHERE (strpos("Film"."title", $1::text) > 0)"#))
        list.append(("starts(with:)", Filter(#Predicate<Film> { $0.title.starts(with: "a_") }),
                    #"WHERE (instr("Film"."title", ?) = 1)"#,
                    #"WHERE (strpos("Film"."title", $1::text) = 1)"#))
        list.append(("text <", Filter(#Predicate<Film> { $0.title < "b" }),
                    #"WHERE ("Film"."title" < ?)"#,
                    #"WHERE ("Film"."title" COLLATE "C" < $1::text COLLATE "C")"#))
        list.append(("enum", Filter(#Predicate<Film> { $0.genre == genre }),
                    #"WHERE ("Film"."genre" = ?)"#,
                    #"WHERE ("Film"."genre" = $1::text)"#))
        list.append(("/ %", Filter(#Predicate<Film> { $0.year / 10 % 3 == 1 }),
                    #"WHERE ((("Film"."year" / ?) % ?) = ?)"#,
                    #"WHERE ((("Film"."year" / $1::bigint) % $2::bigint) = $3::bigint)"#))
        list.append(("! float /", Filter(#Predicate<Film> { $0.rating! / 2 > 1 }),
                    #"WHERE COALESCE((("Film"."rating" / ?) > ?), 0)"#,
                    #"WHERE COALESCE((("Film"."rating" / $1::double precision) > $2::double precision), FALSE)"#))
        list.append(("ternary", Filter(#Predicate<Film> { ($0.seen ? 1 : 0) == 1 }),
                    #"WHERE ((CASE WHEN ("Film"."seen" = TRUE) THEN ? ELSE ? END) = ?)"#,
                    #"WHERE ((CASE WHEN ("Film"."seen" = TRUE) THEN $1::bigint ELSE $2::bigint END) = $3::bigint)"#))
        list.append(("range", Filter(#Predicate<Film> { (1990...2000).contains($0.year) }),
                    #"WHERE (("Film"."year" >= ?) AND ("Film"."year" <= ?))"#,
                    #"WHERE (("Film"."year" >= $1::bigint) AND ("Film"."year" <= $2::bigint))"#))
        list.append(("captured contains", Filter(#Predicate<Film> { names.contains($0.title) }),
                    #"WHERE ("Film"."title" IN (?, ?))"#,
                    #"WHERE ("Film"."title" IN ($1::text, $2::text))"#))
        list.append(("array contains", Filter(#Predicate<Film> { $0.tags.contains("x") }),
                    #"WHERE EXISTS (SELECT 1 FROM json_each("Film"."tags") AS "codable_e1" WHERE ("codable_e1"."value" = ?))"#,
                    #"WHERE EXISTS (SELECT 1 FROM jsonb_array_elements_text("Film"."tags") AS "codable_e1"("value") WHERE ("codable_e1"."value" = $1::text))"#))
        list.append(("array isEmpty", Filter(#Predicate<Film> { $0.tags.isEmpty }),
                    #"WHERE (json_array_length("Film"."tags") = ?)"#,
                    #"WHERE (jsonb_array_length("Film"."tags") = $1::bigint)"#))
        list.append(("array count", Filter(#Predicate<Film> { $0.tags.count > 1 }),
                    #"WHERE (json_array_length("Film"."tags") > ?)"#,
                    #"WHERE (jsonb_array_length("Film"."tags") > $1::bigint)"#))
        list.append(("array allSatisfy", Filter(#Predicate<Film> { $0.scores.allSatisfy { $0 > 0 } }),
                    #"WHERE NOT EXISTS (SELECT 1 FROM json_each("Film"."scores") AS "codable_e1" WHERE NOT ("codable_e1"."value" > ?))"#,
                    #"WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text("Film"."scores") AS "codable_e1"("value") WHERE NOT ("codable_e1"."value"::bigint > $1::bigint))"#))
        list.append(("nested", Filter(#Predicate<Film> { $0.address.city == "Paris" }),
                    #"WHERE (json_extract("Film"."address", '$."city"') = ?)"#,
                    #"WHERE (("Film"."address" #>> ARRAY['city']::text[]) = $1::text)"#))
        list.append(("to-one", Filter(#Predicate<Film> { $0.studio?.name == "A24" }),
                    #"WHERE ((SELECT "codable_r1"."name" FROM "Studio" AS "codable_r1" WHERE "codable_r1"."id" = "Film"."studio") IS ?)"#,
                    #"WHERE ((SELECT "codable_r1"."name" FROM "Studio" AS "codable_r1" WHERE "codable_r1"."id" = "Film"."studio") IS NOT DISTINCT FROM $1::text)"#))
        list.append(("to-many contains where", Filter(#Predicate<Film> { $0.cast.contains { $0.name == "Ann" } }),
                    #"WHERE EXISTS (SELECT 1 FROM "Film.cast" JOIN "Person" AS "codable_t1" ON "codable_t1"."id" = "Film.cast"."target" WHERE "Film.cast"."owner" = "Film"."id" AND ("codable_t1"."name" = ?))"#,
                    #"WHERE EXISTS (SELECT 1 FROM "Film.cast" JOIN "Person" AS "codable_t1" ON "codable_t1"."id" = "Film.cast"."target" WHERE "Film.cast"."owner" = "Film"."id" AND ("codable_t1"."name" = $1::text))"#))
        list.append(("to-many count", Filter(#Predicate<Film> { $0.cast.count > 1 }),
                    #"WHERE ((SELECT count(*) FROM "Film.cast" WHERE "Film.cast"."owner" = "Film"."id") > ?)"#,
                    #"WHERE ((SELECT count(*) FROM "Film.cast" WHERE "Film.cast"."owner" = "Film"."id") > $1::bigint)"#))
        list.append(("to-many isEmpty", Filter(#Predicate<Film> { $0.cast.isEmpty }),
                    #"WHERE (NOT EXISTS (SELECT 1 FROM "Film.cast" WHERE "Film.cast"."owner" = "Film"."id"))"#,
                    #"WHERE (NOT EXISTS (SELECT 1 FROM "Film.cast" WHERE "Film.cast"."owner" = "Film"."id"))"#))
        list.append(("rawValue", Filter(#Predicate<Film> { ($0.priority?.rawValue ?? 0) > 1 && $0.genre.rawValue < genre.rawValue }),
                    #"WHERE ((COALESCE((CASE WHEN "Film"."priority" IS NULL THEN NULL ELSE "Film"."priority" END), ?) > ?) AND ("Film"."genre" < ?))"#,
                    #"WHERE ((COALESCE((CASE WHEN "Film"."priority" IS NULL THEN NULL ELSE "Film"."priority" END), $1::bigint) > $2::bigint) AND ("Film"."genre" COLLATE "C" < $3::text COLLATE "C"))"#))
        list.append(("sort", Filter(#Predicate<Film> { $0.seen }, sortBy: [SortDescriptor(\.title), SortDescriptor(\.rating, order: .reverse)]).limit(5),
                    #"WHERE ("Film"."seen" = TRUE) ORDER BY "title" ASC, "rating" DESC LIMIT ? OFFSET ?"#,
                    #"WHERE ("Film"."seen" = TRUE) ORDER BY "title" COLLATE "C" ASC, "rating" DESC NULLS LAST, "Film".ctid LIMIT $1 OFFSET $2"#))
        return list
    }

    @Test("each operator's SQL on both engines", arguments: await Backend.available)
    func snapshots(_ backend: Backend) async throws {
        let db = try await backend.open()
        for (name, filter, sqlite, postgres) in Self.cases() {
            let sql: String
            switch backend {
            case .sqlite: sql = try (db as! SQLite.Database).sql(for: filter)
            case .postgres:
                #if Postgres
                sql = try await (db as! Postgres.Database).sql(for: filter)
                #else
                continue
                #endif
            }
            #expect(sql == (backend == .sqlite ? sqlite : postgres), "\(backend): \(name)")
        }
    }
}
