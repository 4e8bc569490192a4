#if Postgres
import Foundation
import PostgresNIO

extension Postgres {
    /// The parts of a `postgres://user:password@host:port/database?sslmode=…` URL.
    struct Address: Sendable {
        let host: String
        let port: Int
        let user: String
        let password: String?
        let database: String
        let sslMode: String

        init(url text: String) throws {
            func invalid(_ reason: String) -> Postgres.Error {
                // Never repeat the password in an error.
                var shown = text
                if let components = URLComponents(string: text), components.password != nil {
                    var hidden = components
                    hidden.password = "•••"
                    shown = hidden.string ?? "the URL"
                }
                return Postgres.Error(.invalidURL, message: "\(shown): \(reason)")
            }
            guard let components = URLComponents(string: text), let scheme = components.scheme else {
                throw invalid("not a URL; expected postgres://user:password@host:port/database")
            }
            guard scheme == "postgres" || scheme == "postgresql" else { throw invalid("the scheme must be postgres:// or postgresql://") }
            guard let host = components.host, !host.isEmpty else { throw invalid("no host") }
            guard let user = components.user, !user.isEmpty else { throw invalid("no user name") }
            self.host = host
            port = components.port ?? 5432
            guard (1...65535).contains(port) else { throw invalid("port \(port) is out of range") }
            self.user = user.removingPercentEncoding ?? user
            password = components.password.map { $0.removingPercentEncoding ?? $0 }
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            database = path.isEmpty ? user : (path.removingPercentEncoding ?? path)
            sslMode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
            guard ["disable", "prefer", "require"].contains(sslMode) else {
                throw invalid("sslmode must be disable, prefer or require")
            }
        }

        var clientConfiguration: PostgresClient.Configuration {
            let tls: PostgresClient.Configuration.TLS = switch sslMode {
            case "disable": .disable
            case "require": .require(.makeClientConfiguration())
            default: .prefer(.makeClientConfiguration())
            }
            return PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
        }

        var connectionConfiguration: PostgresConnection.Configuration {
            get throws {
                let tls: PostgresConnection.Configuration.TLS = switch sslMode {
                case "disable": .disable
                case "require": .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                default: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
                return PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
            }
        }
    }
}
#endif
