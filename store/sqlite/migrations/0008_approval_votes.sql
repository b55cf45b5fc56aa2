-- Approvals for teams: the policy that applied, how many distinct people
-- must approve (votes holds each approval as JSON: by, at, comment), whether
-- the requester may approve, the decision's comment or reason, and when the
-- reminder before expiry was recorded ('' = not yet).
ALTER TABLE approvals ADD COLUMN policy      TEXT    NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN required    INTEGER NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN forbid_self INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN votes       TEXT    NOT NULL DEFAULT '[]';
ALTER TABLE approvals ADD COLUMN comment     TEXT    NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN reminded_at TEXT    NOT NULL DEFAULT '';
