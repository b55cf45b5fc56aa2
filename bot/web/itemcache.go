package web

import (
	"bytes"
	"html/template"
	"strconv"
	"sync"

	"brain/engine"
)

// maxCachedItems bounds the rendered timeline entries kept (about 10 MB
// of HTML at a typical 500 bytes each).
const maxCachedItems = 20000

// itemCache keeps the HTML of rendered timeline entries. An event never
// changes once committed, so its entry is rendered once, whoever reloads
// the page or watches it live; the oldest entries are dropped first.
type itemCache struct {
	mu    sync.Mutex
	html  map[string]template.HTML
	order []string // insertion order, for eviction
}

// renderItem returns ev's timeline entry as HTML; ok is false for events the
// timeline leaves out.
func (p *pages) renderItem(ev engine.Event) (template.HTML, bool, error) {
	if ev.ID == "" {
		return p.renderUncached(ev)
	}
	return p.cache.get(ev.ID, func() (template.HTML, bool, error) { return p.renderUncached(ev) })
}

// get returns the HTML cached under key, or renders, keeps and returns it.
func (c *itemCache) get(key string, render func() (template.HTML, bool, error)) (template.HTML, bool, error) {
	c.mu.Lock()
	h, ok := c.html[key]
	c.mu.Unlock()
	if ok {
		return h, h != "", nil
	}
	h, shown, err := render()
	if err != nil {
		return "", false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.html == nil {
		c.html = map[string]template.HTML{}
	}
	if _, dup := c.html[key]; !dup {
		if len(c.order) >= maxCachedItems {
			delete(c.html, c.order[0])
			c.order = c.order[1:]
		}
		c.html[key] = h // "" for a left-out event
		c.order = append(c.order, key)
	}
	return h, shown, nil
}

func (p *pages) renderUncached(ev engine.Event) (template.HTML, bool, error) {
	it, ok := timelineItem(ev)
	if !ok {
		return "", false, nil
	}
	var buf bytes.Buffer
	if err := p.item.ExecuteTemplate(&buf, "item", it); err != nil {
		return "", false, err
	}
	return template.HTML(buf.String()), true, nil // rendered by html/template
}

// reset drops every cached entry.
func (c *itemCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.html, c.order = nil, nil
}

// renderEntry renders a trace entry (a turn, or an event outside turns)
// with the page's own templates. A finished turn's entry is cached: its
// events never change, so the same turn (its id, its number in the page
// and its last event) renders the same; a running one changes as it goes.
func (p *pages) renderEntry(e *traceEntry) (template.HTML, error) {
	if t := e.Turn; t != nil && !t.Running {
		key := "turn " + t.ID + " " + strconv.Itoa(t.N) + " " + strconv.FormatInt(t.Last, 10)
		h, _, err := p.cache.get(key, func() (template.HTML, bool, error) {
			h, err := p.renderEntryUncached(e)
			return h, true, err
		})
		return h, err
	}
	return p.renderEntryUncached(e)
}

func (p *pages) renderEntryUncached(e *traceEntry) (template.HTML, error) {
	var buf bytes.Buffer
	if err := p.item.ExecuteTemplate(&buf, "entry", e); err != nil {
		return "", err
	}
	return template.HTML(buf.String()), nil // rendered by html/template
}
