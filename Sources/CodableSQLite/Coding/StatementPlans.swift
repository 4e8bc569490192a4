/// What the coders learn about one prepared statement, kept in the statement's one opaque slot
/// (``Statement/upperLayerCache``) so it lives and dies with the cached statement.
final class StatementPlans {
    /// Column lookups of the last decode, reused while the statement is not recompiled.
    var columns: ColumnPlan?
    /// Parameter lookups of the last encode.
    var parameters: ParameterPlan?
    /// The decoder of the last decode with default options, kept with its keyed container for the
    /// next call (see ``RowDecoder/forRows(of:options:)``). It holds the statement: the statement's
    /// owner empties ``Statement/upperLayerCache`` before letting go of it, which ends this.
    var decoder: RowDecoder?

    deinit {
        decoder?.endReuse()
    }
}

extension Statement {
    /// The coders' plans for this statement, made on first use.
    var plans: StatementPlans {
        if let plans = upperLayerCache as? StatementPlans { return plans }
        let plans = StatementPlans()
        upperLayerCache = plans
        return plans
    }
}
