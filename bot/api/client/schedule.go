package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"brain/bot/api"
	"brain/bot/config"
	"brain/engine"
)

// TriggerSchedule asks the brain daemon listening at cfg.Listen to run a
// schedule now (POST /v1/schedules/{name}/run), with the first API key if
// any. It is what `brain schedules run` does.
func TriggerSchedule(ctx context.Context, cfg *config.Config, name string) (ScheduleRun, error) {
	base, err := daemonURL(cfg.Listen)
	if err != nil {
		return ScheduleRun{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/schedules/"+url.PathEscape(name)+"/run", nil)
	if err != nil {
		return ScheduleRun{}, fmt.Errorf("run schedule %s: %w", name, err)
	}
	if len(cfg.APIKeys) > 0 {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKeys[0].Key)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return ScheduleRun{}, fmt.Errorf("brain does not answer at %s; is `brain serve` running with this config? (%v)", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return ScheduleRun{}, fmt.Errorf("run schedule %s: read answer: %w", name, err)
	}
	if resp.StatusCode != http.StatusAccepted {
		var env api.ErrorEnvelope
		if json.Unmarshal(body, &env) != nil || env.Error.Code == "" {
			return ScheduleRun{}, fmt.Errorf("run schedule %s: %s from %s", name, resp.Status, base)
		}
		return ScheduleRun{}, engine.Errorf(env.Error.Code, "%s", env.Error.Message)
	}
	var run ScheduleRun
	if err := json.Unmarshal(body, &run); err != nil {
		return ScheduleRun{}, fmt.Errorf("run schedule %s: decode answer: %w", name, err)
	}
	return run, nil
}

// daemonURL turns a listen address into a URL a local client can dial: an
// unspecified host (":8080", "0.0.0.0:8080") is dialled on loopback.
func daemonURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port), nil
}
