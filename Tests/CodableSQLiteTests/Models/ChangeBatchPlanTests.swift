import Foundation
import Testing
@testable import CodableSQLite

// ChangeBatch.noteUpdate on its own: the ids of updated rows before and after, and what the batch
// says they did.

private func batch(inserted: Set<Int> = [], updated: Set<Int> = [], deleted: Set<Int> = [], isComplete: Bool = true) -> ChangeBatch<Int> {
    ChangeBatch(inserted: inserted, updated: updated, deleted: deleted, isComplete: isComplete)
}

@Suite("Plans: updates in change batches")
struct ChangeBatchPlanTests {
    @Test("An update that keeps the ids is an update")
    func sameIDsAreUpdated() {
        var changes = batch()
        changes.noteUpdate(old: [1, 2], new: [1, 2])
        #expect(changes == batch(updated: [1, 2]))
    }

    @Test("An update that changes an id deletes the old one and inserts the new one")
    func changedIDIsDeletedAndInserted() {
        var changes = batch()
        changes.noteUpdate(old: [1], new: [2])
        #expect(changes == batch(inserted: [2], deleted: [1]))
    }

    @Test("Some ids kept and some changed, in one statement")
    func mixedUpdate() {
        var changes = batch()
        changes.noteUpdate(old: [1, 2, 3], new: [1, 2, 30])
        #expect(changes == batch(inserted: [30], updated: [1, 2], deleted: [3]))
    }

    @Test("Two rows that swap ids both keep an id that exists before and after: both updated")
    func swappedIDsAreUpdated() {
        var changes = batch()
        changes.noteUpdate(old: [1, 2], new: [2, 1])
        #expect(changes == batch(updated: [1, 2]))
    }

    @Test("Updates add to what the batch already holds, and leave isComplete alone")
    func unionWithExistingSets() {
        var changes = batch(inserted: [5, 3], updated: [6], deleted: [7], isComplete: false)
        changes.noteUpdate(old: [1, 2, 6], new: [2, 3, 6])
        #expect(changes == batch(inserted: [5, 3], updated: [6, 2], deleted: [7, 1], isComplete: false))
        changes.noteUpdate(old: [4], new: [7])
        #expect(changes == batch(inserted: [5, 3, 7], updated: [6, 2], deleted: [7, 1, 4], isComplete: false))
    }

    @Test("An update of no rows changes nothing")
    func emptyUpdateChangesNothing() {
        var changes = batch(inserted: [1], updated: [2], deleted: [3])
        changes.noteUpdate(old: [], new: [])
        #expect(changes == batch(inserted: [1], updated: [2], deleted: [3]))
    }

    @Test("The rule holds for any id type: model ids")
    func uuidIDs() {
        let (a, b) = (UUID(), UUID())
        var changes = ChangeBatch<UUID>(inserted: [], updated: [], deleted: [], isComplete: true)
        changes.noteUpdate(old: [a], new: [b])
        #expect(changes.inserted == [b])
        #expect(changes.deleted == [a])
        #expect(changes.updated.isEmpty)
    }
}
