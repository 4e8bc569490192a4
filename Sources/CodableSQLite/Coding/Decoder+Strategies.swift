import Foundation

extension CodingStrategy.KeyDecoding {
    /// Identifies the strategy in a statement's cached ``ColumnPlan``; `nil` for closures, which
    /// cannot be compared, so their plans are never shared.
    var planIdentifier: Int? {
        switch self {
        case .useDefaultKeys: 0
        case .convertFromSnakeCase: 1
        case .custom: nil
        }
    }
}
