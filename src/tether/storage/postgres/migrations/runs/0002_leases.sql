-- runs 0002: a fencing epoch per lease (bumped by every claim) and a count of storage
-- faults that stopped the run's current node in a row (reset when a node completes).
ALTER TABLE runs ADD COLUMN lease_epoch bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN storage_faults integer NOT NULL DEFAULT 0;
