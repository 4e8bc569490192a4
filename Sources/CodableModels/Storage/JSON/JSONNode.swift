/// A JSON value being encoded. Containers are reference boxes, so a nested container handed
/// out by `nestedContainer(keyedBy:forKey:)` keeps writing into its parent, as Codable requires.
@usableFromInline package enum JSONNode {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array(JSONArrayBox)
    case object(JSONObjectBox)
    /// A value a `superEncoder` writes later.
    case reference(JSONReferenceBox)

    /// The JSON text, compact, object members in the order they were encoded.
    package var text: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    package func write(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let text): Self.writeString(text, to: &bytes)
        case .array(let box):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in box.elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let box):
            bytes.append(UInt8(ascii: "{"))
            for (offset, member) in box.members.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        case .reference(let box):
            (box.node ?? .object(JSONObjectBox())).write(to: &bytes)
        }
    }

    /// The node a `superEncoder` reference stands for (an empty object if nothing was written).
    package var resolved: JSONNode {
        guard case .reference(let box) = self else { return self }
        return box.node?.resolved ?? .object(JSONObjectBox())
    }

    package static func writeString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

@usableFromInline package final class JSONArrayBox {
    package var elements: [JSONNode] = []

    package init() {}
}

@usableFromInline package final class JSONObjectBox {
    package private(set) var members: [(key: String, value: JSONNode)] = []
    private var indexByKey: [String: Int] = [:]

    package init() {}

    /// Sets a member; encoding the same key twice replaces the first value in place.
    package func set(_ key: String, _ value: JSONNode) {
        if let index = indexByKey[key] {
            members[index].value = value
        } else {
            indexByKey[key] = members.count
            members.append((key, value))
        }
    }

    package subscript(key: String) -> JSONNode? {
        indexByKey[key].map { members[$0].value }
    }
}

@usableFromInline package final class JSONReferenceBox {
    package var node: JSONNode?
}

extension JSONNode {
    /// The JSON text of an array of strings, written directly (the common `[String]` column).
    package static func text(of strings: [String]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + strings.reduce(0) { $0 + $1.utf8.count + 3 })
        bytes.append(UInt8(ascii: "["))
        for (offset, string) in strings.enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            writeString(string, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
