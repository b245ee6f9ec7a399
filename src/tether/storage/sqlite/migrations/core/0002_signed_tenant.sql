-- core 0002: the subject-hash key leaves the database. It is the master key now, kept
-- outside (TETHER_SECRET_KEY or the key file); `tether migrate` moved a key stored here
-- into the key file before this runs.

DELETE FROM tether_meta WHERE key = 'subject_hash_key';
