package config

import "strings"

// SecretsKeyEnv is the environment variable holding the secrets key when
// secrets.key_file is not set.
const SecretsKeyEnv = "BRAIN_SECRETS_KEY"

// SecretsConfig is where the key that encrypts stored credentials comes
// from (docs/connections.md, "Keys"): a file of base64 keys, one a line,
// the current first and older ones after it; unset, the environment
// variable BRAIN_SECRETS_KEY (same format); neither, credentials are
// stored unencrypted and brain says so at start-up.
type SecretsConfig struct {
	KeyFile string `yaml:"key_file"`
}

// validateSecrets checks the secrets block.
func (c *Config) validateSecrets(p *problems) {
	if f := c.SecretsAtRest.KeyFile; f != "" && strings.TrimSpace(f) != f {
		p.add("secrets.key_file", "must not start or end with spaces")
	}
}
