#if Macros
import SwiftCompilerPlugin
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@RowCodable`, `@RowDecodable` and `@RowEncodable`: an extension that reads and writes a
/// struct's coded properties by position, for the coders of both engines (`RowReader`,
/// `RowWriter` in CodableModels).
///
/// The properties are the ones Swift's synthesized `Codable` codes, in declaration order: stored
/// instance properties, except `let`s with an initial value and, when the type declares
/// `CodingKeys`, those it has no case for. Their keys are the type's own `CodingKeys` (declared
/// or synthesized), so names, errors and coding paths are plain Codable's.
public struct RowCodableMacro: ExtensionMacro {
    /// What a macro generates: decoding, encoding or both.
    struct Parts {
        var decoding: Bool
        var encoding: Bool
    }

    static func parts(of node: AttributeSyntax) -> Parts {
        switch node.attributeName.trimmedDescription {
        case "RowDecodable", "CodableModels.RowDecodable", "CodableSQLite.RowDecodable": Parts(decoding: true, encoding: false)
        case "RowEncodable", "CodableModels.RowEncodable", "CodableSQLite.RowEncodable": Parts(decoding: false, encoding: true)
        default: Parts(decoding: true, encoding: true)
        }
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let macro = "@" + node.attributeName.trimmedDescription
        guard let structure = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: RowCodableMessage(
                "\(macro) applies to a struct; classes, enums and actors decode through plain Codable")))
            return []
        }
        var parts = parts(of: node)
        // `@RowCodable` on a type that says it is only `Decodable` (or only `Encodable`) generates
        // that direction: the other would not compile.
        let inherited = Set(structure.inheritanceClause?.inheritedTypes.map { $0.type.trimmedDescription } ?? [])
        let codable = !inherited.isDisjoint(with: ["Codable", "Swift.Codable"])
        let decodable = codable || !inherited.isDisjoint(with: ["Decodable", "Swift.Decodable"])
        let encodable = codable || !inherited.isDisjoint(with: ["Encodable", "Swift.Encodable"])
        if decodable != encodable {
            parts.decoding = parts.decoding && decodable
            parts.encoding = parts.encoding && encodable
        }
        let members = structure.memberBlock.members.map(\.decl)
        if parts.decoding, let custom = members.first(where: { isFunction($0, named: "init", firstLabel: "from") }) {
            context.diagnose(Diagnostic(node: custom, message: RowCodableMessage(
                "\(macro) generates decoding from the stored properties, and \(structure.name.text) has its own init(from:), "
                    + "which the generated code would not run; remove one of them")))
            return []
        }
        if parts.encoding, let custom = members.first(where: { isFunction($0, named: "encode", firstLabel: "to") }) {
            context.diagnose(Diagnostic(node: custom, message: RowCodableMessage(
                "\(macro) generates encoding from the stored properties, and \(structure.name.text) has its own encode(to:), "
                    + "which the generated code would not run; remove one of them")))
            return []
        }
        if let conditional = members.first(where: declaresPropertiesConditionally) {
            context.diagnose(Diagnostic(node: conditional, message: RowCodableMessage(
                "\(macro) cannot tell which properties an #if block declares; declare stored properties outside #if, "
                    + "or decode \(structure.name.text) through plain Codable")))
            return []
        }
        let codingKeyCases = declaredCodingKeys(in: members)
        var properties: [Property] = []
        for member in members {
            guard let variable = member.as(VariableDeclSyntax.self) else { continue }
            let stored = storedProperties(of: variable, macro: macro, context: context)
            properties += stored.filter { codingKeyCases?.contains($0.name) ?? true }
        }

        let access = accessModifier(of: structure)
        var body: [String] = []
        body.append("""
            /// The coding keys of the coded properties, in the order the generated code reads and writes them.
            \(access)static var rowCodingKeys: [any CodingKey] { [\(properties.map { "CodingKeys.\(escaped($0.name))" }.joined(separator: ", "))] }
            """)
        if parts.decoding {
            let reads = properties.enumerated().map { index, property in
                "self.\(escaped(property.name)) = try row.\(property.isOptional ? "decodeIfPresent" : "decode")(at: \(index))"
            }
            body.append("""
                \(access)init<Row: CodableModels.RowReader>(row: inout Row) throws {
                \(reads.map { "    " + $0 }.joined(separator: "\n"))
                }

                \(access)static func decodeRows<Row: CodableModels.RowReader>(_ row: inout Row, capacity: Int) throws -> [Self] {
                    var rows: [Self] = []
                    rows.reserveCapacity(capacity)
                    repeat {
                        rows.append(\(rowExpression(properties, memberwise: !declaresInitializer(members))))
                    } while try row.nextRow()
                    return rows
                }
                """)
        }
        if parts.encoding {
            let writes = properties.enumerated().map { index, property in
                property.isOptional
                    ? "if let present = self.\(escaped(property.name)) { try row.encode(present, at: \(index)) }"
                    : "try row.encode(self.\(escaped(property.name)), at: \(index))"
            }
            body.append("""
                \(access)func encode<Row: CodableModels.RowWriter>(row: inout Row) throws {
                \(writes.map { "    " + $0 }.joined(separator: "\n"))
                }
                """)
        }
        let conformances = protocols.map(\.trimmedDescription).filter { name in
            name.hasSuffix("RowDecodable") ? parts.decoding : name.hasSuffix("RowEncodable") ? parts.encoding : true
        }
        let inheritance = conformances.isEmpty ? "" : ": " + conformances.joined(separator: ", ")
        let source: DeclSyntax = """
            extension \(type.trimmed)\(raw: inheritance) {
            \(raw: body.joined(separator: "\n\n"))
            }
            """
        guard let extensionDecl = source.as(ExtensionDeclSyntax.self) else { return [] }
        return [extensionDecl]
    }

    /// One row as an expression. With the memberwise initializer (a struct that declares no
    /// initializer in its body) the value is built where it goes: `self.x = …` in a generic
    /// throwing initializer costs a copy and a destroy of the whole value per row.
    static func rowExpression(_ properties: [Property], memberwise: Bool) -> String {
        guard memberwise else { return "try Self(row: &row)" }
        let arguments = properties.enumerated().map { index, property in
            "\(property.name): row.\(property.isOptional ? "decodeIfPresent" : "decode")(at: \(index))"
        }
        return "try Self(\(arguments.joined(separator: ", ")))"
    }

    /// Whether `decl` is an `#if` block declaring stored instance properties (a macro sees no
    /// build settings, so it cannot tell which of them exist).
    static func declaresPropertiesConditionally(_ decl: DeclSyntax) -> Bool {
        guard let conditional = decl.as(IfConfigDeclSyntax.self) else { return false }
        return conditional.clauses.contains { clause in
            guard case .decls(let members)? = clause.elements else { return false }
            return members.contains { member in
                guard let variable = member.decl.as(VariableDeclSyntax.self) else { return declaresPropertiesConditionally(member.decl) }
                if variable.modifiers.contains(where: { $0.name.text == "static" || $0.name.text == "class" }) { return false }
                return variable.bindings.contains { binding in
                    switch binding.accessorBlock?.accessors {
                    case nil: return true
                    case .getter?: return false
                    case .accessors(let list)?: return list.allSatisfy { ["willSet", "didSet"].contains($0.accessorSpecifier.text) }
                    }
                }
            }
        }
    }

    /// Whether the struct's body declares an initializer (then it has no memberwise one).
    static func declaresInitializer(_ members: [DeclSyntax]) -> Bool {
        members.contains { $0.is(InitializerDeclSyntax.self) }
    }

    /// Whether `decl` is `init(from:…)` or `func encode(to:…)`.
    static func isFunction(_ decl: DeclSyntax, named name: String, firstLabel: String) -> Bool {
        if name == "init", let initializer = decl.as(InitializerDeclSyntax.self) {
            return initializer.signature.parameterClause.parameters.first?.firstName.text == firstLabel
        }
        if let function = decl.as(FunctionDeclSyntax.self), function.name.text == name,
           !function.modifiers.contains(where: { $0.name.text == "static" }) {
            return function.signature.parameterClause.parameters.first?.firstName.text == firstLabel
        }
        return false
    }

    /// The case names of a `CodingKeys` enum declared in the type's body, or `nil` when it has none.
    static func declaredCodingKeys(in members: [DeclSyntax]) -> Set<String>? {
        for member in members {
            guard let keys = member.as(EnumDeclSyntax.self), keys.name.text == "CodingKeys" else { continue }
            var names: Set<String> = []
            for item in keys.memberBlock.members {
                guard let cases = item.decl.as(EnumCaseDeclSyntax.self) else { continue }
                for element in cases.elements { names.insert(element.name.text.trimmingBackticks) }
            }
            return names
        }
        return nil
    }

    /// A coded property, and whether its declared type is an optional (`T?`, `T!`,
    /// `Optional<T>`), which Codable reads with `decodeIfPresent` and writes with
    /// `encodeIfPresent`. A property without a written type is taken as not optional.
    struct Property {
        let name: String
        let isOptional: Bool
    }

    /// The coded stored properties one `var`/`let` declares (none for static, computed or
    /// initialized `let` properties).
    static func storedProperties(of variable: VariableDeclSyntax, macro: String, context: some MacroExpansionContext) -> [Property] {
        let modifiers = variable.modifiers.map(\.name.text)
        if modifiers.contains("static") || modifiers.contains("class") { return [] }
        if modifiers.contains("lazy") {
            context.diagnose(Diagnostic(node: variable, message: RowCodableMessage(
                "\(macro) does not support lazy properties; make it a computed property or a plain stored one")))
            return []
        }
        if let wrapper = variable.attributes.first(where: { $0.is(AttributeSyntax.self) }) {
            context.diagnose(Diagnostic(node: wrapper, message: RowCodableMessage(
                "\(macro) does not support property wrappers or attributes on stored properties; "
                    + "Codable codes the wrapper, not the value: decode this type through plain Codable")))
            return []
        }
        let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
        var properties: [Property] = []
        // In `var a, b: Int?` only the last binding writes the type: it is every earlier one's.
        var sharedType: TypeSyntax?
        for binding in variable.bindings.reversed() {
            if let written = binding.typeAnnotation?.type {
                sharedType = written
            } else if binding.initializer != nil {
                sharedType = nil
            }
            let type = binding.typeAnnotation?.type ?? sharedType
            if let accessors = binding.accessorBlock {
                // `get`, or a bare getter body: computed. `willSet`/`didSet` only: stored.
                switch accessors.accessors {
                case .getter: continue
                case .accessors(let list):
                    let kinds = list.map(\.accessorSpecifier.text)
                    if kinds.contains(where: { $0 != "willSet" && $0 != "didSet" }) { continue }
                }
            }
            if isLet && binding.initializer != nil { continue }
            guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
                context.diagnose(Diagnostic(node: binding.pattern, message: RowCodableMessage(
                    "\(macro) needs one name per property; declare the tuple's parts as properties of their own")))
                continue
            }
            properties.append(Property(name: identifier.identifier.text.trimmingBackticks, isOptional: type.map(isOptional) ?? false))
        }
        return properties.reversed()
    }

    static func isOptional(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let attributed = type.as(AttributedTypeSyntax.self) { return isOptional(attributed.baseType) }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            return identifier.name.text == "Optional" && identifier.genericArgumentClause != nil
        }
        if let member = type.as(MemberTypeSyntax.self) {
            return member.baseType.trimmedDescription == "Swift" && member.name.text == "Optional" && member.genericArgumentClause != nil
        }
        return false
    }

    /// `public`, `package` or nothing: the generated members are as visible as the type.
    static func accessModifier(of structure: StructDeclSyntax) -> String {
        for modifier in structure.modifiers {
            switch modifier.name.text {
            case "public", "open": return "public "
            case "package": return "package "
            default: continue
            }
        }
        return ""
    }

    /// A property name as an identifier in generated code (`default` → `` `default` ``).
    static func escaped(_ name: String) -> String {
        let keywords: Set<String> = [
            "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
            "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static",
            "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do", "else",
            "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "as", "false",
            "is", "nil", "self", "Self", "super", "throws", "true", "try", "Any", "Type",
        ]
        return keywords.contains(name) ? "`\(name)`" : name
    }
}

/// An error the macro reports at the declaration it is about.
struct RowCodableMessage: DiagnosticMessage {
    let message: String
    init(_ message: String) { self.message = message }
    var diagnosticID: MessageID { MessageID(domain: "CodableSQLiteMacros", id: "RowCodable") }
    var severity: DiagnosticSeverity { .error }
}

extension String {
    var trimmingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count > 1 ? String(dropFirst().dropLast()) : self
    }
}

@main
struct CodableSQLiteMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [RowCodableMacro.self]
}
#else
/// Without the Macros trait the plugin is a stub: nothing of swift-syntax is built.
@main
enum CodableSQLiteMacrosStub {
    static func main() {}
}
#endif
