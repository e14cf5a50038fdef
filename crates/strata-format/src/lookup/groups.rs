//! Decompressed row groups of local lookup files, kept in memory (Paimon keeps the data blocks of its local
//! lookup files in its lookup cache, under the same `lookup.cache-max-memory-size` as their index blocks).
//! A row in a cached group is found without a read, a CRC check or a decompression. Groups take the memory
//! the keys and bloom filters leave, least recently used out first, and always give way to keys.

use std::collections::{BTreeMap, HashMap};

use arrow_buffer::Buffer;

/// A group: (the lookup file's id in its cache, the group's index in the file).
pub(crate) type GroupId = (u64, u64);

/// Bytes a cached group costs beyond its body (its map and order entries).
const ENTRY_OVERHEAD: u64 = 96;

/// Decompressed groups, least recently used first out.
#[derive(Default)]
pub(crate) struct GroupCache {
    entries: HashMap<GroupId, (Buffer, u64)>,
    /// Each entry's last use, oldest first.
    order: BTreeMap<u64, GroupId>,
    tick: u64,
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

    /// Sets the bytes groups may take, dropping the least recently used past it.
    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
        while self.bytes > self.limit && self.pop_oldest() {}
    }

    /// The body of group `id`, marking it most recently used.
    pub(crate) fn get(&mut self, id: GroupId) -> Option<Buffer> {
        self.tick += 1;
        let (body, used) = self.entries.get_mut(&id)?;
        self.order.remove(used);
        *used = self.tick;
        self.order.insert(self.tick, id);
        Some(body.clone())
    }

    /// Keeps `body` as group `id` if it fits the limit, making room by dropping the least recently used.
    pub(crate) fn insert(&mut self, id: GroupId, body: Buffer) {
        let c = cost(&body);
        if c > self.limit {
            return;
        }
        self.remove(id);
        while self.bytes + c > self.limit && self.pop_oldest() {}
        self.tick += 1;
        self.bytes += c;
        self.order.insert(self.tick, id);
        self.entries.insert(id, (body, self.tick));
    }

    /// Drops every group of lookup file `file`.
    pub(crate) fn drop_file(&mut self, file: u64) {
        let gone: Vec<GroupId> = self.entries.keys().filter(|(f, _)| *f == file).copied().collect();
        for id in gone {
            self.remove(id);
        }
    }

    fn remove(&mut self, id: GroupId) {
        if let Some((body, used)) = self.entries.remove(&id) {
            self.order.remove(&used);
            self.bytes -= cost(&body);
        }
    }

    /// Drops the least recently used group; false when there is none.
    fn pop_oldest(&mut self) -> bool {
        let Some((_, id)) = self.order.pop_first() else { return false };
        if let Some((body, _)) = self.entries.remove(&id) {
            self.bytes -= cost(&body);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> Buffer {
        Buffer::from_vec(vec![7u8; n])
    }

    /// The cache against a model: what it returns is what was put, it never holds more than its limit, and
    /// what it drops first is what was used longest ago.
    #[test]
    fn least_recently_used_groups_go_first_and_the_limit_holds() {
        let mut c = GroupCache::default();
        c.set_limit(3 * (100 + ENTRY_OVERHEAD));
        for g in 0..3 {
            c.insert((1, g), body(100));
        }
        assert!(c.get((1, 0)).is_some(), "group 0 is used again: group 1 is now the oldest");
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
