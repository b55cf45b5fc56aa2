package bot

import (
	"time"

	"brain/bot/audit"
	"brain/tools"
)

// buildGovernance makes the audit recorder the API and the console record
// through and, with audit.signing_key_file set, the sealer that signs the
// chain's head every audit.seal_every (a service, stopped last so it
// seals what the others recorded).
func (a *App) buildGovernance(clock func() time.Time) error {
	a.audit = &audit.Recorder{Store: a.store, Now: clock}
	if f := a.cfg.Audit.SigningKeyFile; f != "" {
		key, err := audit.LoadPrivateKey(f)
		if err != nil {
			return err
		}
		a.sealer = &audit.Sealer{Store: a.store, Key: key, Every: a.cfg.Audit.SealEvery.Std(), Now: clock,
			Log: a.log.With(tools.LogComponent, "audit")}
	}
	return nil
}
