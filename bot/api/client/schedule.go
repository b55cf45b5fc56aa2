package client

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"brain/bot/schedule"
)

// RunSchedule asks the daemon to run a schedule now (POST
// /v1/schedules/{name}/run). It is what `brain schedules run` does.
func (d *Daemon) RunSchedule(ctx context.Context, name string) (schedule.Run, error) {
	var run schedule.Run
	err := d.call(ctx, http.MethodPost, "/v1/schedules/"+url.PathEscape(name)+"/run", nil, &run)
	return run, err
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
