//! Decompressed row groups of local lookup files, kept in memory (Paimon keeps the data blocks of its local
//! lookup files in its lookup cache, under the same `lookup.cache-max-memory-size` as their index blocks).
//! A row in a cached group is found without a read, a CRC check or a decompression. Groups take the memory
//! the keys and bloom filters leave, the least recently used (near enough: a clock) out first, and always
//! give way to keys.

use std::collections::HashMap;

use arrow_buffer::Buffer;

/// A group: (the lookup file's id in its cache, the group's index in the file).
pub(crate) type GroupId = (u64, u64);

/// Bytes a cached group costs beyond its body (its map and order entries).
const ENTRY_OVERHEAD: u64 = 96;

/// A cached group and whether it was used since the clock hand last passed it.
struct Slot {
    id: GroupId,
    body: Buffer,
    used: bool,
}

/// Decompressed groups, evicted by the clock (second-chance) approximation of least recently used: a hit
/// sets one flag, where keeping an exact order cost two ordered-map updates per lookup.
#[derive(Default)]
pub(crate) struct GroupCache {
    slots: Vec<Option<Slot>>,
    index: HashMap<GroupId, usize>,
    free: Vec<usize>,
    hand: usize,
    bytes: u64,
    /// Bytes the groups may take now (what the keys leave of the memory bound).
    limit: u64,
}

fn cost(body: &Buffer) -> u64 {
    body.len() as u64 + ENTRY_OVERHEAD
}

impl GroupCache {
    /// Bytes the cached groups take.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Sets the bytes groups may take, evicting past it.
    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
        while self.bytes > self.limit && self.evict_one() {}
    }

    /// The body of group `id`, marking it used.
    pub(crate) fn get(&mut self, id: GroupId) -> Option<Buffer> {
        let slot = self.slots.get_mut(*self.index.get(&id)?)?.as_mut()?;
        slot.used = true;
        Some(slot.body.clone())
    }

    /// Keeps `body` as group `id` if it fits the limit, evicting others to make room.
    pub(crate) fn insert(&mut self, id: GroupId, body: Buffer) {
        self.remove(id);
        let c = cost(&body);
        if c > self.limit {
            return;
        }
        while self.bytes + c > self.limit && self.evict_one() {}
        self.bytes += c;
        let slot = Some(Slot { id, body, used: false });
        let at = match self.free.pop() {
            Some(at) => {
                self.slots[at] = slot;
                at
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        self.index.insert(id, at);
    }

    /// Drops every group of lookup file `file`.
    pub(crate) fn drop_file(&mut self, file: u64) {
        let gone: Vec<GroupId> = self.index.keys().filter(|(f, _)| *f == file).copied().collect();
        for id in gone {
            self.remove(id);
        }
    }

    fn remove(&mut self, id: GroupId) {
        let Some(at) = self.index.remove(&id) else { return };
        if let Some(slot) = self.slots.get_mut(at).and_then(Option::take) {
            self.bytes -= cost(&slot.body);
            self.free.push(at);
        }
    }

    /// Evicts the first group the hand finds unused since its last pass (clearing the flags it passes);
    /// false when the cache is empty.
    fn evict_one(&mut self) -> bool {
        if self.index.is_empty() {
            return false;
        }
        // Two turns at most: the first clears every flag it passes.
        for _ in 0..2 * self.slots.len() {
            let at = self.hand % self.slots.len();
            self.hand = at + 1;
            match self.slots[at].as_mut() {
                Some(slot) if slot.used => slot.used = false,
                Some(slot) => {
                    let id = slot.id;
                    self.remove(id);
                    return true;
                }
                None => {}
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Against a model of what was last put under each id: a group found is exactly the body last put
        /// under its id and not dropped since; the bytes counted are those of the groups held, within the
        /// limit after every step.
        #[test]
        fn a_group_found_is_the_one_last_put(ops in proptest::collection::vec((0u8..5, 0u64..3, 0u64..6, 1usize..300), 1..200)) {
            let mut c = GroupCache::default();
            c.set_limit(2_000);
            let mut model: HashMap<GroupId, u8> = HashMap::new();
            for (step, (op, file, group, n)) in ops.into_iter().enumerate() {
                let id = (file, group);
                match op {
                    0 | 1 => {
                        let tag = step as u8;
                        let mut b = vec![tag; n];
                        b[0] = tag;
                        c.insert(id, Buffer::from_vec(b));
                        model.insert(id, tag);
                    }
                    2 => {
                        if let Some(b) = c.get(id) {
                            proptest::prop_assert_eq!(Some(&b.as_slice()[0]), model.get(&id), "group {:?}", id);
                        }
                    }
                    3 => {
                        c.drop_file(file);
                        model.retain(|(f, _), _| *f != file);
                    }
                    _ => c.set_limit(n as u64 * 10),
                }
                let held: u64 = c.slots.iter().flatten().map(|s| cost(&s.body)).sum();
                proptest::prop_assert_eq!(held, c.bytes());
                proptest::prop_assert!(c.bytes() <= c.limit);
                proptest::prop_assert_eq!(c.index.len(), c.slots.iter().flatten().count());
            }
        }
    }

    fn body(n: usize) -> Buffer {
        Buffer::from_vec(vec![7u8; n])
    }

    /// What it returns is what was put, it never holds more than its limit, and a group used since the
    /// clock last passed outlives one that was not.
    #[test]
    fn unused_groups_go_first_and_the_limit_holds() {
        let mut c = GroupCache::default();
        c.set_limit(3 * (100 + ENTRY_OVERHEAD));
        for g in 0..3 {
            c.insert((1, g), body(100));
        }
        assert!(c.get((1, 0)).is_some(), "group 0 is used again: group 1 goes first");
        c.insert((2, 0), body(100));
        assert!(c.get((1, 1)).is_none());
        assert!(c.get((1, 0)).is_some() && c.get((1, 2)).is_some() && c.get((2, 0)).is_some());
        assert_eq!(c.bytes(), 3 * (100 + ENTRY_OVERHEAD));
        c.drop_file(1);
        assert_eq!(c.bytes(), 100 + ENTRY_OVERHEAD);
        assert!(c.get((1, 0)).is_none() && c.get((2, 0)).is_some());
        c.insert((3, 0), body(10_000));
        assert!(c.get((3, 0)).is_none(), "a group larger than the limit is not kept");
        c.set_limit(0);
        assert_eq!(c.bytes(), 0);
        assert!(c.get((2, 0)).is_none());
        c.insert((4, 0), body(1));
        assert_eq!(c.bytes(), 0, "nothing is kept under a zero limit");
    }
}
