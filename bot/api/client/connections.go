package client

import (
	"context"
	"net/url"
	"time"

	"brain/store"
)

// Connection is a connection as the API shows it: never its tokens.
type Connection struct {
	ID             string     `json:"id"`
	PersonID       string     `json:"person_id"`
	Provider       string     `json:"provider"`
	Account        string     `json:"account"`
	Scope          string     `json:"scope"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	Status         string     `json:"status"`
	Problem        string     `json:"problem,omitempty"`
	ServiceAccount bool       `json:"service_account"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// Connections lists the connections of a person, or every one when
// person is nil.
func (d *Daemon) Connections(ctx context.Context, person *string) ([]Connection, error) {
	path := "/v1/connections"
	if person != nil {
		path += "?" + url.Values{"person": {*person}}.Encode()
	}
	var out struct {
		Connections []Connection `json:"connections"`
	}
	err := d.call(ctx, "GET", path, nil, &out)
	return out.Connections, err
}

// RevokeConnection revokes a connection: its tokens are forgotten.
func (d *Daemon) RevokeConnection(ctx context.Context, id, by string) (Connection, error) {
	var out Connection
	err := d.call(ctx, "POST", "/v1/connections/"+url.PathEscape(id)+"/revoke", map[string]string{"by": by}, &out)
	return out, err
}

// ConnectLink is where to send a browser to connect an account.
type ConnectLink struct {
	URL       string `json:"url"`
	ExpiresIn int    `json:"expires_in"`
}

// Connect starts connecting person ("" the workspace) to provider and
// returns the URL to open (POST /v1/connections/connect).
func (d *Daemon) Connect(ctx context.Context, provider, person string) (ConnectLink, error) {
	var out ConnectLink
	err := d.call(ctx, "POST", "/v1/connections/connect", map[string]string{"provider": provider, "person": person}, &out)
	return out, err
}

// MarkServiceAccount marks (or unmarks) a connection as its provider's
// service account, the one schedules use.
func (d *Daemon) MarkServiceAccount(ctx context.Context, id string, enabled bool) (Connection, error) {
	var out Connection
	err := d.call(ctx, "POST", "/v1/connections/"+url.PathEscape(id)+"/service-account", map[string]bool{"enabled": enabled}, &out)
	return out, err
}

// ErasePerson erases a person (brain people erase) and returns what went.
func (d *Daemon) ErasePerson(ctx context.Context, id string) (store.PersonErased, error) {
	var out store.PersonErased
	err := d.call(ctx, "POST", "/v1/people/"+url.PathEscape(id)+"/erase", nil, &out)
	return out, err
}
