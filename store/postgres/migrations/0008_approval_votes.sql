-- Approvals for teams (store/sqlite's 0008): the policy that applied, how
-- many distinct people must approve (votes holds each approval as JSON: by,
-- at, comment), whether the requester may approve, the decision's comment or
-- reason, and when the reminder before expiry was recorded (NULL = not yet).
ALTER TABLE approvals ADD COLUMN policy      text     NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN required    integer  NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN forbid_self boolean  NOT NULL DEFAULT false;
ALTER TABLE approvals ADD COLUMN votes       text     NOT NULL DEFAULT '[]';
ALTER TABLE approvals ADD COLUMN comment     text     NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN reminded_at utc_time;
