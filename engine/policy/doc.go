// Package policy is the approval-policy matcher behind approvals.policies:
// which policy, if any, applies to one call of an approval tool. It is pure
// (no I/O, no clock) so config validation can compile policies without the
// engine's runtime. It imports nothing of the project.
package policy
