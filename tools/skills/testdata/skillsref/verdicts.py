"""Print skills-ref's verdict on each skill folder named on the command line.

The Agent Skills specification's reference validator (skills-ref, from
github.com/agentskills/agentskills at commit 69ef37e9, Apache-2.0: see
LICENSE) is vendored unchanged in skills_ref/. This runner imports only its
validator, which needs strictyaml (Debian: python3-strictyaml), and prints
one JSON object: each folder -> the list of problems skills-ref reports
([] = valid). tools/skills/corpus_test.go runs it when it can.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from skills_ref.validator import validate  # noqa: E402

json.dump({d: validate(Path(d)) for d in sys.argv[1:]}, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
