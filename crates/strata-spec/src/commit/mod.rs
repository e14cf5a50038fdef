//! What writers hand to the commit: the increments of a bucket's write and compaction, the commit message
//! that carries them (Paimon's `CommitMessageImpl`), and its serialized form.

pub(crate) mod commit_increment;
pub(crate) mod commit_message;
pub(crate) mod commit_message_codec;
