#if !Postgres
import Testing

/// Without the `Postgres` trait the PostgreSQL engine is not built, so none of its tests can run:
/// say so in the test report rather than passing silently.
@Suite("PostgreSQL engine")
struct PostgresEngineNotBuilt {
    @Test(.disabled("the PostgreSQL engine is not in this build; run: swift test --traits Postgres"))
    func postgresTestsNeedTheTrait() {}
}
#endif
