from __future__ import annotations

from pathlib import Path

from mtplint.extract import ExtractContext, FileLoader
from mtplint.extract.launch import Launch
from mtplint.extract.systemd import extract
from mtplint.source import Token


def run(tmp_path: Path, files: dict[str, str], unit: str) -> tuple[list[Launch], ExtractContext]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    loader = FileLoader(tmp_path)
    source = loader.load(tmp_path / unit)
    assert source is not None
    context = ExtractContext(loader)
    return extract(source, context), context


def values(tokens: list[Token]) -> list[object]:
    return [token.to_json() for token in tokens]


VLLM_UNIT = """\
[Unit]
Description=vLLM with MTP
After=network-online.target

[Service]
Environment="MODEL=Qwen/Qwen3.6-27B" PORT=8000
Environment=EXTRA="--max-num-seqs 8 --enforce-eager"
EnvironmentFile=-/etc/vllm/vllm.env
ExecStart=-/opt/venv/bin/vllm serve ${MODEL} \\
    --port ${PORT} $EXTRA \\
    # comment lines inside a continuation are skipped
    --speculative-config '{"method":"mtp","num_speculative_tokens":2}'
Restart=always

[Install]
WantedBy=multi-user.target
"""


def test_exec_start_with_environment_and_environment_file(tmp_path: Path) -> None:
    (launch,), context = run(tmp_path, {"vllm.service": VLLM_UNIT, "vllm.env": "PORT=9000\nVLLM_USE_V1=1\n"},
                             "vllm.service")
    assert launch.engine == "vllm" and launch.entry == "vllm serve"
    assert values(launch.args) == ["Qwen/Qwen3.6-27B", "--port", "9000", "--max-num-seqs", "8", "--enforce-eager",
                                   "--speculative-config", '{"method":"mtp","num_speculative_tokens":2}']
    assert launch.context == "line 9"
    spec = launch.args[-1].span
    assert spec is not None and (spec.line, spec.column, spec.end_column) == (12, 27, 70)  # inside the quotes
    model = launch.args[0].span
    assert model is not None and (model.line, model.column, model.end_column) == (9, 37, 45)
    # EnvironmentFile= overrides Environment=
    assert launch.env["PORT"].value.value == "9000"
    assert launch.env["PORT"].span is not None and launch.env["PORT"].span.file == "vllm.env"
    assert launch.env["MODEL"].value.value == "Qwen/Qwen3.6-27B"
    assert context.related == {"vllm.service": ["vllm.env"]}


def test_missing_environment_file_leaves_variables_unresolved(tmp_path: Path) -> None:
    unit = "[Service]\nEnvironmentFile=/etc/default/vllm\nExecStart=/usr/bin/vllm serve $MODEL_ID --port ${PORT}\n"
    (launch,), _ = run(tmp_path, {"vllm.service": unit}, "vllm.service")
    model, _, port = launch.args
    assert model.splat and model.unresolved == ("MODEL_ID",)
    assert port.unresolved == ("PORT",) and not port.splat
    assert any("/etc/default/vllm" in note for note in launch.notes)


def test_started_script_is_read_with_the_unit_environment(tmp_path: Path) -> None:
    unit = """\
[Service]
EnvironmentFile=/etc/sglang/sglang.env
ExecStart=/bin/bash /srv/sglang/start.sh --tp 2
"""
    script = """\
#!/bin/bash
set -e
export SGLANG_ENABLE_SPEC_V2=1
exec python3 -m sglang.launch_server --model-path "$SGLANG_MODEL" \\
  --speculative-algorithm NEXTN "$@"
"""
    (launch,), context = run(tmp_path, {"sglang.service": unit, "sglang.env": "SGLANG_MODEL=Qwen/Qwen3.6-35B-A3B\n",
                                        "start.sh": script}, "sglang.service")
    assert launch.source.display == "start.sh"
    assert launch.context == "line 4"
    assert values(launch.args) == ["--model-path", "Qwen/Qwen3.6-35B-A3B", "--speculative-algorithm", "NEXTN",
                                   "--tp", "2"]
    assert launch.env["SGLANG_ENABLE_SPEC_V2"].value.value == "1"
    assert launch.env["SGLANG_MODEL"].span is not None and launch.env["SGLANG_MODEL"].span.file == "sglang.env"
    assert any("sglang.service" in note for note in launch.notes)
    assert context.related["sglang.service"] == ["sglang.env", "start.sh"]


def test_script_started_directly_by_path(tmp_path: Path) -> None:
    unit = "[Service]\nEnvironment=PORT=8123\nExecStart=/opt/serve.sh\n"
    script = "#!/usr/bin/env bash\nllama-server -m /models/q.gguf --port \"$PORT\" --spec-type draft-mtp\n"
    (launch,), _ = run(tmp_path, {"llama.service": unit, "serve.sh": script}, "llama.service")
    assert launch.engine == "llama.cpp"
    assert values(launch.args)[2:4] == ["--port", "8123"]


def test_sh_dash_c_and_prefixes(tmp_path: Path) -> None:
    unit = """\
[Service]
Environment=MODEL=m
ExecStart=
ExecStart=!!/bin/sh -c 'exec vllm serve "$MODEL" --port 8000'
"""
    (launch,), _ = run(tmp_path, {"a.service": unit}, "a.service")
    assert values(launch.argv) == ["vllm", "serve", "m", "--port", "8000"]
    assert launch.span is not None and (launch.span.line, launch.span.column) == (4, 30)


def test_at_prefix_and_specifiers(tmp_path: Path) -> None:
    unit = "[Service]\nExecStart=@/usr/bin/llama-server llama-server -m /m/%i.gguf --alias 100%%\n"
    (launch,), _ = run(tmp_path, {"llama@.service": unit}, "llama@.service")
    assert launch.program[0].value == "/usr/bin/llama-server"
    assert launch.args[1].unresolved == ("%i",)
    assert launch.args[3].value == "100%"


def test_drop_in_overrides_exec_start(tmp_path: Path) -> None:
    unit = "[Service]\nExecStart=/usr/bin/vllm serve m1\n"
    drop_in = "[Service]\nExecStart=\nExecStart=/usr/bin/vllm serve m2\n"
    (launch,), _ = run(tmp_path, {"v.service": unit, "v.service.d/override.conf": drop_in}, "v.service")
    assert values(launch.args) == ["m2"]
    assert launch.source.display == "v.service.d/override.conf"
