import Foundation

extension CodingStrategy.KeyEncoding {
    /// Identifies the strategy in a statement's cached ``ParameterPlan``; `nil` for closures, which
    /// cannot be compared, so their plans are never shared.
    var planIdentifier: Int? {
        switch self {
        case .useDefaultKeys: 0
        case .convertToSnakeCase: 1
        case .custom: nil
        }
    }
}
