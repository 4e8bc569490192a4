#if Postgres
import Foundation

extension Postgres.Database {
    /// What observation keeps per database, attached to it (Core does not know it): the
    /// listening connection, stopped when the database closes.
    final class ObservationState: Sendable {
        /// The listening connection of live queries and change sequences (opened by the first).
        let listener: Listener
        /// The tables whose triggers notify their changes (see ``ChangeNotifications``).
        let notifyingTables = Locked<Set<String>>([])

        init(listener: Listener) {
            self.listener = listener
        }
    }

    private var observationState: ObservationState {
        attachment(ObservationState.self) { database in
            let listener = Listener(address: database.address)
            database.onClose { listener.stop() }
            return ObservationState(listener: listener)
        }
    }

    /// The listening connection of live queries and change sequences.
    var listener: Listener { observationState.listener }
    /// The tables whose triggers notify their changes.
    var notifyingTables: Locked<Set<String>> { observationState.notifyingTables }
}
#endif
