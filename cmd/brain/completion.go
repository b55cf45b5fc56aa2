package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// commandWords are the commands and subcommands completion offers.
var commandWords = map[string][]string{
	"":            {"serve", "chat", "sessions", "schedules", "approvals", "audit", "memory", "config", "skills", "migrate", "connections", "people", "secrets", "completion", "version", "help"},
	"sessions":    {"list", "show", "send", "resume", "cancel", "compact"},
	"schedules":   {"list", "run"},
	"skills":      {"list", "sync"},
	"approvals":   {"list", "show", "approve", "deny"},
	"audit":       {"export", "verify"},
	"memory":      {"list", "show", "export", "delete"},
	"config":      {"check"},
	"secrets":     {"keygen", "rotate"},
	"connections": {"list", "revoke", "connect", "service-account"},
	"people":      {"erase"},
	"completion":  {"bash", "zsh"},
}

const commonFlags = "--config --help --json --status --limit --agent --session --as --comment --grace --to --from --dsn --replace --person"

const bashCompletion = `# brain completion for bash: source <(brain completion bash)
_brain() {
  local cur prev cmd
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  cmd="${COMP_WORDS[1]}"
  if [[ "$prev" == "--config" ]]; then
    COMPREPLY=( $(compgen -f -X '!*.y*ml' -- "$cur") $(compgen -d -- "$cur") )
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "%s" -- "$cur") )
    return
  fi
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=( $(compgen -W "%s" -- "$cur") )
    return
  fi
  if [[ $COMP_CWORD -eq 2 ]]; then
    case "$cmd" in
%s    esac
  fi
}
complete -F _brain brain
`

const zshCompletion = `#compdef brain
# brain completion for zsh: source <(brain completion zsh)
_brain() {
  if [[ "${words[CURRENT-1]}" == "--config" ]]; then
    _files -g '*.y(a|)ml'
    return
  fi
  if [[ "${words[CURRENT]}" == -* ]]; then
    compadd -- %s
    return
  fi
  if (( CURRENT == 2 )); then
    compadd -- %s
    return
  fi
  if (( CURRENT == 3 )); then
    case "${words[2]}" in
%s    esac
  fi
}
compdef _brain brain
`

// completion prints a shell completion script.
func completion(args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 || (args[0] != "bash" && args[0] != "zsh") {
		fmt.Fprintln(stderr, "Usage: brain completion bash|zsh\n\n  bash: source <(brain completion bash)   zsh: source <(brain completion zsh)")
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("completion needs a shell: bash or zsh")
	}
	var cases strings.Builder
	for _, cmd := range commandWords[""] {
		subs, ok := commandWords[cmd]
		if !ok {
			continue
		}
		if args[0] == "bash" {
			fmt.Fprintf(&cases, "      %s) COMPREPLY=( $(compgen -W %q -- \"$cur\") ) ;;\n", cmd, strings.Join(subs, " "))
		} else {
			fmt.Fprintf(&cases, "      %s) compadd -- %s ;;\n", cmd, strings.Join(subs, " "))
		}
	}
	top := strings.Join(commandWords[""], " ")
	if args[0] == "bash" {
		fmt.Fprintf(stdout, bashCompletion, commonFlags, top, cases.String())
	} else {
		fmt.Fprintf(stdout, zshCompletion, commonFlags, top, cases.String())
	}
	return nil
}
