"""The Python package against the command line: the same program and settings give the same
figures, because both plan through the one session."""

import json

import pytest

import ttdl

pd = pytest.importorskip("pandas")

TWO_TASKS = """(deftask a b)
(with-task a (write-stream 8 b))
(with-task b (read-stream 8 a))
(println "two tasks")"""


def loaded(path, **kw):
    s = ttdl.Session(echo=False, **kw)
    s.load(path)
    return s


@pytest.mark.parametrize(
    "name", ["fft.ttdl", "jacobi-2d.ttdl", "reader-writer.ttdl", "sensor-fusion.ttdl"]
)
def test_plan_is_the_command_lines_document(cli, example, name):
    plan = loaded(example(name)).plan()
    out = cli("run", example(name), "--format", "json")
    # Byte for byte: the same session, the same serialiser.
    assert plan.to_json() == out
    want = json.loads(out)
    assert plan.metrics == want["metrics"]
    assert plan.config == want["config"]
    assert len(plan.messages) == len(want["messages"])
    assert len(plan.schedule) == len(want["schedule"])
    assert len(plan.links) == len(want["network"]["links"])


def test_fft_figures(example):
    plan = loaded(example("fft.ttdl")).plan()
    m = plan.metrics
    # 16 tasks on mesh:4x4 (the script's target); the exact scheduler meets the critical path.
    assert (m["makespan"], m["critical_path"], m["lower_bound"]) == (72, 72, 72)
    assert m["deadlines_met"] is True and m["relaxed"] == []
    assert plan.config["network"] == "mesh:4x4"
    assert "makespan" in plan.summary and "72" in plan.summary


def test_settings_are_the_command_lines_flags(cli, example):
    path = example("fft.ttdl")
    plan = loaded(path).plan(
        network="torus:4x4", place="identity", route="shortest", schedule="exact",
        seed=5, ports=2, latency=1, timing="thesis",
    )
    out = cli(
        "run", path, "--network", "torus:4x4", "--place", "identity", "--route", "shortest",
        "--schedule", "exact", "--seed", "5", "--ports", "2", "--latency", "1",
        "--timing", "thesis", "--format", "json",
    )
    assert plan.to_json() == out
    c = plan.config
    assert (c["network"], c["place"], c["route"], c["seed"], c["ports"], c["latency"]) == (
        "torus:4x4", "identity", "shortest", 5, 2, 1,
    )
    assert plan.metrics["ports"] == 2 and plan.metrics["hop_latency"] == 1


def test_mapping_setting_is_the_mapping_flag(cli, example):
    path = example("jacobi-2d.ttdl")
    s = loaded(path)
    plan = s.plan(mapping="identity")
    assert plan.to_json() == cli("run", path, "--mapping", "identity", "--format", "json")
    # The keyword applies to that plan only: the session's own mapping is unchanged.
    assert s.mapping is None
    assert s.plan().to_json() == cli("run", path, "--format", "json")


def test_dataframe_columns(example):
    plan = loaded(example("fft.ttdl")).plan()
    assert list(plan.messages.columns) == [
        "id", "src", "dst", "size", "release", "deadline", "phase", "iteration", "route",
        "effective_deadline", "sent", "arrival",
    ]
    assert list(plan.schedule.columns) == ["msg", "link", "start", "end"]
    assert list(plan.links.columns) == ["from", "to", "busy"]
    assert list(plan.tasks.columns) == ["id", "name", "node"]
    sched = plan.schedule
    # Resources are hashable tuples, so the schedule groups by them.
    kinds = {link[0] if isinstance(link[0], str) else "link" for link in sched["link"]}
    assert kinds == {"inject", "eject", "link"}
    assert (sched["end"] > sched["start"]).all()
    # A message arrives when its last row ends.
    last = sched.groupby("msg")["end"].max()
    arrival = plan.messages.set_index("id")["arrival"]
    assert (last == arrival.loc[last.index]).all()
    # Each link's busy cycles are its schedule rows' cycles.
    links = plan.links
    held = sched[sched["link"].map(lambda l: not isinstance(l[0], str))]
    total = (held["end"] - held["start"]).sum()
    assert links["busy"].sum() == total > 0


def test_tables_are_lists_of_dicts_without_pandas(example, monkeypatch):
    plan = loaded(example("reader-writer.ttdl")).plan()
    monkeypatch.setattr(ttdl, "_pd", None)
    assert not ttdl.has_pandas()
    rows = plan.messages
    assert isinstance(rows, list) and isinstance(rows[0], dict)
    assert rows == plan.document["messages"]
    assert isinstance(plan.schedule, list) and isinstance(plan.links, list)


def test_html_and_notebook_view(example):
    plan = loaded(example("reader-writer.ttdl")).plan()
    page = plan.html("reader-writer")
    assert page.lstrip().lower().startswith("<!doctype html") and "reader-writer" in page
    cell = plan._repr_html_()
    assert "<svg" in cell and "makespan" in cell
    assert repr(plan).startswith("<ttdl.Plan makespan=")


def test_eval_plans_and_echoes_what_the_program_prints(capsys):
    s = ttdl.Session()
    s.eval(TWO_TASKS)
    assert capsys.readouterr().out == "two tasks\n"
    assert s.printed == "two tasks\n"
    assert s.eval("(+ 1 2)") == "3"
    plan = s.plan(network="mesh:2x1")
    assert plan.metrics["makespan"] == 8
    assert plan.messages["route"].tolist() == [[0, 1]]


def test_check_is_the_command_lines(cli, example):
    path = example("fft.ttdl")
    check = loaded(path).check()
    want = cli.json("check", path)
    assert check.document == want
    assert check.metrics["critical_path"] == 72
    assert len(check.messages) == 20 and len(check.tasks) == 16
    assert check.text == cli("check", path)


def test_script_error_carries_the_rendered_diagnostic(tmp_path):
    s = ttdl.Session()
    with pytest.raises(ttdl.ScriptError) as e:
        s.eval("(define x 1)\n(+ x y)", name="bad.ttdl")
    text = str(e.value)
    assert text.startswith("error[unbound]: unbound variable `y`")
    assert "bad.ttdl:2:6" in text and "(+ x y)" in text and "not defined" in text
    assert e.value.diagnostics[0]["code"] == "unbound"
    assert isinstance(e.value, ttdl.TtdlError)
    # The same from a file, named by its path; the session goes on after the error.
    bad = tmp_path / "bad.ttdl"
    bad.write_text("(deftask a)\n(with-task a (write-stream 4 nobody))\n")
    with pytest.raises(ttdl.ScriptError, match=r"bad\.ttdl:2:"):
        s.load(bad)
    assert s.eval("(+ 2 2)") == "4"


def test_max_depth_raises_the_nested_call_depth():
    deep = "(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1)))))\n(count 20000)"
    with pytest.raises(ttdl.ScriptError, match="runaway-recursion"):
        ttdl.Session(echo=False).eval(deep)
    assert ttdl.Session(echo=False, max_depth=100_000).eval(deep) == "20000"
    with pytest.raises(ValueError, match="max_depth"):
        ttdl.Session(max_depth=0)


def test_a_missing_file_is_an_os_error():
    with pytest.raises(OSError, match="cannot read `/nonexistent/x.ttdl`"):
        ttdl.Session().load("/nonexistent/x.ttdl")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"netwrok": "mesh:2x2"}, "unknown setting `netwrok`: did you mean `network`?"),
        ({"lpsolver": "microlp"}, "did you mean `lp_solver`?"),
        ({"ports": 0}, "`ports` takes a whole number from 1 to 64, not `0`"),
        ({"seed": -1}, "`seed` takes a whole number from 0, not -1"),
        ({"throughput": "maybe"}, "`throughput` takes on or off"),
        ({"buffer": "lots"}, "`buffer` takes a whole number from 0 to 1048576, or unbounded"),
        ({"effort": "hard"}, "`effort` takes one of quick, default, thorough"),
        ({"network": "mesh:0x2"}, "mesh"),
        ({"place": "everywhere"}, "everywhere"),
    ],
)
def test_bad_settings_are_value_errors(kwargs, message):
    s = ttdl.Session()
    s.eval(TWO_TASKS)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("?", r"\?")):
        s.plan(**kwargs)


def test_simulate_is_the_command_lines(cli, example):
    path = example("fft.ttdl")
    sim = loaded(path).simulate("wormhole", vc=2, buf=4)
    want = cli.json("simulate", path, "--model", "wormhole", "vc=2", "buf=4")["simulation"]
    assert sim.document == want
    assert sim.model == "wormhole vc=2 buf=4"
    assert sim.completion == want["completion"] > 0
    assert list(sim.links.columns) == ["from", "to", "busy", "utilization"]
    assert len(sim.messages) == 20


def test_simulate_takes_plan_settings_and_model_options(cli, example):
    path = example("reader-writer.ttdl")
    sim = loaded(path).simulate("circuit", network="ring:4", setup=3)
    want = cli.json("simulate", path, "--network", "ring:4", "--model", "circuit", "setup=3")
    assert sim.document == want["simulation"]
    # `seed` is warp's own option: it goes to the model, as after `--model warp`.
    sim = loaded(path).simulate("warp", seed=9, network="mesh:2x2")
    want = cli.json("simulate", path, "--network", "mesh:2x2", "--model", "warp", "seed=9")
    assert sim.document == want["simulation"] and sim.model == want["simulation"]["model"]
    with pytest.raises(ValueError, match="has no option `vcs`"):
        loaded(path).simulate("wormhole", vcs=2)
    with pytest.raises(ValueError, match="unknown model `wormhol`"):
        loaded(path).simulate("wormhol")


def test_compare_rows_are_the_command_lines(cli, example):
    path = example("reader-writer.ttdl")
    models = ["scheduled", "wormhole", "store-forward", "compiled algorithm=aapc"]
    table = loaded(path).compare(models)
    want = cli.json("compare", path, "--models", ",".join(models))["compare"]
    # Energy beside time: the JSON's `energy.total_pj` is the table's `energy_pj`.
    for row in want:
        if "energy" in row:
            row["energy_pj"] = row["energy"]["total_pj"]
    assert _same_rows(table, want)
    assert list(table.columns[:8]) == [
        "model", "completion", "completion_norm", "mean_latency", "mean_latency_norm",
        "max_latency", "max_latency_norm", "energy_pj",
    ]
    ran = table["energy_pj"].notna()
    assert ran.sum() == 3 and (table["energy_pj"][ran] > 0).all()
    assert table["model"].iloc[0].startswith("scheduled")
    # The best model's completion is 1.0 normalized.
    assert table["completion_norm"].min() == 1.0
    # A comma-separated string names the same models.
    again = loaded(path).compare(",".join(models))
    assert again["model"].tolist() == table["model"].tolist()
    with pytest.raises(ValueError, match="unknown model `wormhol`"):
        loaded(path).compare(["wormhol"])
    with pytest.raises(ValueError, match="names no model"):
        loaded(path).compare(" , ")


def _same_rows(table, want):
    """Rows equal field by field, a missing field being NaN in the table."""
    got = table.to_dict("records")
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        for k, v in g.items():
            if k in w:
                if w[k] != v:
                    return False
            elif v == v:  # not NaN: a field the JSON row does not have
                return False
    return True


def test_compare_every_model_by_default(example):
    table = loaded(example("reader-writer.ttdl")).compare()
    names = {m.split(" ")[0] for m in table["model"]}
    assert names == set(ttdl.model_names())


def test_setting_names_are_spec_section_3s():
    assert ttdl.setting_names() == [
        "network", "mapping", "place", "route", "schedule", "lp_solver", "ports", "latency",
        "setup", "buffer", "timing", "throughput", "follow", "seed", "effort",
    ]


def test_a_program_that_cannot_be_planned_is_a_plan_error(example):
    s = loaded(example("fft.ttdl"))
    # The FFT's tasks have no coordinates for a canned mapping to place.
    with pytest.raises(ttdl.PlanError, match="placement by mapping needs physical coordinates"):
        s.plan(place="mapping")
    # One node for 16 tasks still plans, late: every late message is listed with its cause.
    late = s.plan(network="mesh:1x1")
    m = late.metrics
    assert m["deadlines_met"] is False and len(m["relaxed"]) > 0
    assert {"msg", "deadline", "new_deadline", "cause"} <= set(m["relaxed"][0])


def test_save_writes_what_run_out_writes(cli, example, tmp_path):
    path = example("reader-writer.ttdl")
    plan = loaded(path).plan()
    mine, theirs = tmp_path / "py", tmp_path / "cli"
    wrote = plan.save(mine, "reader-writer")
    cli("run", path, "--out", theirs)
    names = sorted(p.name for p in mine.iterdir())
    assert names == sorted(p.name for p in theirs.iterdir())
    # Every file but the list of what TTDL wrote there.
    assert wrote == len(names) - 1 and "reader-writer.json" in names
    for n in names:
        assert (mine / n).read_bytes() == (theirs / n).read_bytes(), n
    # A file TTDL did not write is never replaced.
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "report.html").write_text("mine")
    with pytest.raises(OSError, match="refusing to overwrite"):
        plan.save(tmp_path / "other")
    assert (tmp_path / "other" / "report.html").read_text() == "mine"
