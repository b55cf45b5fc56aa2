package slackfake

import (
	"encoding/json"
	"unicode/utf8"
)

// Slack's documented limits; a message over them fails like on Slack.
const (
	maxText         = 40000
	maxBlocks       = 50
	maxID           = 255
	maxSectionText  = 3000
	maxFields       = 10
	maxFieldText    = 2000
	maxHeaderText   = 150
	maxElements     = 25
	maxButtonText   = 75
	maxButtonValue  = 2000
	maxContextElems = 10
	// maxBlocksText is the text a message's blocks may carry in all: Slack
	// refuses more with msg_blocks_too_long (a markdown block alone may
	// hold it all).
	maxBlocksText = 12000
)

type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type element struct {
	Type     string      `json:"type"`
	ActionID string      `json:"action_id"`
	Value    string      `json:"value"`
	Text     *textObject `json:"text"`
}

type block struct {
	Type    string          `json:"type"`
	BlockID string          `json:"block_id"`
	RawText json.RawMessage `json:"text"` // an object; a string in a markdown block
	Fields  []textObject    `json:"fields"`
	// Elements are buttons or, in a context block, text objects.
	Elements json.RawMessage `json:"elements"`

	Text     *textObject `json:"-"` // RawText, when an object
	Markdown string      `json:"-"` // RawText, in a markdown block
}

// decode fills Text or Markdown from RawText.
func (b *block) decode() bool {
	if len(b.RawText) == 0 || string(b.RawText) == "null" {
		return true
	}
	if b.Type == "markdown" {
		return json.Unmarshal(b.RawText, &b.Markdown) == nil
	}
	b.Text = &textObject{}
	return json.Unmarshal(b.RawText, b.Text) == nil
}

// textSize counts the characters a block carries, toward maxBlocksText.
func (b block) textSize() int {
	n := utf8.RuneCountInString(b.Markdown)
	if b.Text != nil {
		n += utf8.RuneCountInString(b.Text.Text)
	}
	for _, f := range b.Fields {
		n += utf8.RuneCountInString(f.Text)
	}
	if b.Type == "context" {
		var elems []textObject
		_ = json.Unmarshal(b.Elements, &elems)
		for _, e := range elems {
			n += utf8.RuneCountInString(e.Text)
		}
	}
	return n
}

// checkBlocks returns "invalid_blocks" (or "msg_blocks_too_long") when
// Slack would reject the blocks, "" when they pass. It checks the limits this project depends on, not
// every rule of Block Kit.
func checkBlocks(raw string) string { return checkBlocksUpTo(raw, maxBlocks) }

// checkBlocksUpTo is checkBlocks with a block limit (messages 50, Home
// tab views 100).
func checkBlocksUpTo(raw string, limit int) string {
	var blocks []block
	if json.Unmarshal([]byte(raw), &blocks) != nil || len(blocks) > limit {
		return "invalid_blocks"
	}
	ids := map[string]bool{}
	size := 0
	for _, b := range blocks {
		if !b.decode() {
			return "invalid_blocks"
		}
		size += b.textSize()
		if b.BlockID != "" {
			if ids[b.BlockID] || utf8.RuneCountInString(b.BlockID) > maxID {
				return "invalid_blocks"
			}
			ids[b.BlockID] = true
		}
		if !checkBlock(b) {
			return "invalid_blocks"
		}
	}
	if size > maxBlocksText {
		return "msg_blocks_too_long"
	}
	return ""
}

func checkBlock(b block) bool {
	switch b.Type {
	case "section":
		if (b.Text == nil && len(b.Fields) == 0) || len(b.Fields) > maxFields {
			return false
		}
		if b.Text != nil && !textOK(b.Text, maxSectionText) {
			return false
		}
		for _, f := range b.Fields {
			if !textOK(&f, maxFieldText) {
				return false
			}
		}
		return true
	case "header":
		return b.Text != nil && b.Text.Type == "plain_text" && textOK(b.Text, maxHeaderText)
	case "context":
		var elems []textObject
		if json.Unmarshal(b.Elements, &elems) != nil || len(elems) == 0 || len(elems) > maxContextElems {
			return false
		}
		return true
	case "actions":
		var elems []element
		if json.Unmarshal(b.Elements, &elems) != nil || len(elems) == 0 || len(elems) > maxElements {
			return false
		}
		// Slack rejects two elements with one action_id in a block.
		actions := map[string]bool{}
		for _, e := range elems {
			if (e.ActionID != "" && actions[e.ActionID]) || utf8.RuneCountInString(e.ActionID) > maxID {
				return false
			}
			actions[e.ActionID] = true
			if e.Type == "button" && (e.Text == nil || !textOK(e.Text, maxButtonText) ||
				utf8.RuneCountInString(e.Value) > maxButtonValue) {
				return false
			}
		}
		return true
	case "context_actions":
		return checkContextActions(b.Elements)
	case "markdown":
		return b.Markdown != "" && utf8.RuneCountInString(b.Markdown) <= maxBlocksText
	case "divider", "rich_text", "image":
		return true
	default:
		return false
	}
}

func textOK(t *textObject, limit int) bool {
	return (t.Type == "mrkdwn" || t.Type == "plain_text") && t.Text != "" &&
		utf8.RuneCountInString(t.Text) <= limit
}

// checkContextActions checks a context_actions block: 1 to 5 feedback
// buttons or icon buttons; feedback buttons need both buttons, each with
// plain text up to 75 characters and a value up to 2000.
func checkContextActions(raw json.RawMessage) bool {
	var elems []struct {
		Type     string `json:"type"`
		ActionID string `json:"action_id"`
		Positive *struct {
			Text  *textObject `json:"text"`
			Value string      `json:"value"`
		} `json:"positive_button"`
		Negative *struct {
			Text  *textObject `json:"text"`
			Value string      `json:"value"`
		} `json:"negative_button"`
	}
	if json.Unmarshal(raw, &elems) != nil || len(elems) == 0 || len(elems) > 5 {
		return false
	}
	for _, e := range elems {
		switch e.Type {
		case "icon_button":
		case "feedback_buttons":
			for _, b := range []*struct {
				Text  *textObject `json:"text"`
				Value string      `json:"value"`
			}{e.Positive, e.Negative} {
				if b == nil || b.Text == nil || b.Text.Type != "plain_text" || !textOK(b.Text, maxButtonText) ||
					b.Value == "" || utf8.RuneCountInString(b.Value) > maxButtonValue {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}
