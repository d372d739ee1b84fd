"""The `hero` command: grade submissions, rebuild the release, run the demo."""

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

EXIT_GRADER_FAILED = 2
EXIT_BELOW_THRESHOLD = 1


# reports read by machines: whoever writes one grades unattended and names the assignment
UNATTENDED = (("gradescope", "--gradescope"), ("junit", "--junit"), ("github_summary", "--github-summary"))


def _assignments(args, folders):
    """The assignment of each folder: --assignment (the grader's choice, whatever the folders
    hold), or the only one a folder fits, said on stderr.  None and a message when refused."""
    from . import registry

    if args.assignment:
        try:
            registry.find_assignment(folders[0], args.assignment)
        except registry.UnknownAssignment as exc:
            return None, f"hero grade: {exc}"
        return args.assignment, None
    unattended = [flag for dest, flag in UNATTENDED if getattr(args, dest) is not None]
    if unattended:
        return None, (f"hero grade: {', '.join(unattended)} writes a report for a machine: name the assignment it "
                      f"grades with --assignment ID (the grader's choice; a submission's files never choose it)")
    chosen = []
    for folder in folders:
        try:
            chosen.append(registry.find_assignment(folder))
        except registry.UnknownAssignment as exc:
            return None, f"hero grade: {exc}"
    for assignment in dict.fromkeys(chosen):
        count = chosen.count(assignment)
        print(f"hero grade: grading {count if len(folders) > 1 else 'the'} submission{'s' if count > 1 else ''} as "
              f"{assignment.id}, the only assignment {'each folder' if count > 1 else 'the folder'} fits "
              f"(its notebook or its name); --assignment names it", file=sys.stderr)
    return [assignment.id for assignment in chosen], None


def _say(text):
    """A line for the grader's stderr: folder names and refusals can hold a student's text, and in
    --format json no stop-commands wrapper covers them."""
    from .report import printable

    print(printable(text), file=sys.stderr)


def _grade(args):
    from . import report

    # in a GitHub job the runner obeys no workflow command from here on, student text or not,
    # until the token only this process knows; the annotations come after it
    with report.ci_quiet(enabled=args.format != "json") as after:
        return _grade_quietly(args, after)


def _grade_quietly(args, after):
    folders = [Path(p) for p in args.paths]
    for folder in folders:
        if not folder.is_dir():
            _say(f"hero grade: {folder} is not a folder")
            return EXIT_GRADER_FAILED
    assignment, refusal = _assignments(args, folders)
    if refusal:
        _say(refusal)
        return EXIT_GRADER_FAILED
    from . import report

    roots = report.protected_roots(folders)
    try:
        for target in _output_paths(args):
            report.check_output(target, roots)
    except report.UnsafeOutput as exc:
        _say(f"hero grade: refused before grading: {exc}")
        return EXIT_GRADER_FAILED
    from .progress import Timer
    from .sandbox import WorkerPool

    timer = Timer()
    pool = WorkerPool()  # the workers import torch while this process does the same below
    try:
        from . import engine

        reports = engine.grade_many(folders, assignment, pool=pool, timeout=args.timeout, show_progress=True)
    finally:
        pool.close()
    full = sum(result.score == result.max_score for result in reports)
    mean = sum(result.score for result in reports) / len(reports)
    print(f"hero grade: {len(reports)} submission(s) graded in {timer.elapsed:.1f} s; {full} with full marks; "
          f"mean {mean:g} / {reports[0].max_score:g}", file=sys.stderr)
    try:
        _write_reports(args, reports, report, roots, after)
    except report.UnsafeOutput as exc:
        _say(f"hero grade: {exc}")
        return EXIT_GRADER_FAILED
    if args.format == "json":
        print(report.to_json(reports))
    else:
        for index, result in enumerate(reports):
            if index:
                print()
            print(report.table(result, args.lang))
            if args.details:
                print(report.details(result, args.lang))
    if args.fail_under is not None:
        for result in reports:
            percent = 100.0 * result.score / result.max_score if result.max_score else 0.0
            if percent < args.fail_under:
                _say(f"hero grade: {result.submission} scored {percent:.1f}% < {args.fail_under:g}%")
                return EXIT_BELOW_THRESHOLD
    return 0


def _output_paths(args):
    import os

    paths = [args.gradescope, args.junit]
    if args.github_summary is not None:
        paths.append(args.github_summary or os.environ.get("GITHUB_STEP_SUMMARY"))
    return [path for path in paths if path]


def _write_reports(args, reports, report, roots, after):
    """The report files, each opened without following a link; the annotations go to `after`
    (printed once the runner obeys workflow commands again)."""
    import json
    import os

    from . import registry

    if args.gradescope:
        if len(reports) != 1:
            raise ValueError("--gradescope writes the results of one submission")
        with report.open_output(args.gradescope, roots) as out:
            out.write(json.dumps(report.gradescope(reports[0]), ensure_ascii=False, indent=2))
    if args.junit:
        with report.open_output(args.junit, roots) as out:
            out.write(report.junit(reports))
    if args.github_summary is not None:
        targets = {e.id: (e.module, e.target) for e in registry.all_exercises()}
        summary_path = args.github_summary or os.environ.get("GITHUB_STEP_SUMMARY")
        parts = [report.github(result, Path.cwd(), targets, args.lang) for result in reports]
        markdown = "\n".join(text for text, _ in parts)
        if summary_path:
            with report.open_output(summary_path, roots, append=True) as summary:
                summary.write(markdown)
        else:  # not in a GitHub job and no FILE named: the summary goes to the terminal, not nowhere
            print("hero grade: --github-summary: no FILE given and $GITHUB_STEP_SUMMARY is not set; "
                  "the summary follows on standard output", file=sys.stderr)
            print(markdown)
        for _, annotations in parts:
            after.extend(annotations)


def _release(args):
    from . import release

    release.build(args.output, only=args.assignments)
    which = f" for {', '.join(args.assignments)}" if args.assignments else ""
    print(f"rebuilt {', '.join(release.GENERATED_DIRS)}{which} under {args.output or release.registry.REPO_ROOT}")
    return 0


def _start(args):
    """A student's working copy of the release: a re-release never touches it."""
    import shutil

    from . import registry, release

    known = [*registry.ASSIGNMENTS, release.LABS]
    if args.assignment not in known:
        print(f"hero start: no assignment {args.assignment!r}; there are: {', '.join(known)}", file=sys.stderr)
        return 2
    released = registry.REPO_ROOT / registry.RELEASE_DIR / args.assignment
    target = Path(args.dir or Path("work") / args.assignment)
    if target.exists():
        print(f"hero start: {target} already exists; it is kept as it is (your work is never overwritten). "
              f"Name another folder: hero start {args.assignment} OTHER_DIR", file=sys.stderr)
        return 1
    shutil.copytree(released, target, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    if args.assignment == release.LABS:
        print(f"your copy of the labs: {target}/\nopen any notebook in it in JupyterLab; each runs its experiment "
              f"(or loads the runs already finished) and shows the plots")
        return 0
    assignment = registry.ASSIGNMENTS[args.assignment]
    print(f"your working copy of {assignment.id}: {target}/\n"
          f"open {target / assignment.notebook_name} in JupyterLab and fill the stubs in "
          f"{target / registry.PACKAGE}/; `hero release` and `nbgrader generate_assignment` never touch this folder")
    return 0


def _samples(args):
    from . import registry, samples

    chosen = [registry.ASSIGNMENTS[args.assignment]] if args.assignment else None
    written = samples.write(Path(args.output), chosen, with_hostile=not args.no_hostile)
    for assignment_id, folder in written.items():
        print(f"{assignment_id}: {len(samples.names(folder, with_hostile=True))} samples in {folder}")
    return 0


def _mutants(args):
    from . import mutants, registry
    from .progress import Timer
    from .sandbox import WorkerPool

    unknown = [name for name in args.assignments if name not in registry.ASSIGNMENTS]
    if unknown:
        _say(f"hero mutants: no such assignment: {', '.join(unknown)} (known: {', '.join(registry.ASSIGNMENTS)})")
        return 2
    chosen = [registry.ASSIGNMENTS[name] for name in args.assignments] or list(registry.ASSIGNMENTS.values())
    timer, pool = Timer(), WorkerPool()
    try:
        results = mutants.run(chosen, pool, per_exercise=args.sample, exercises=args.exercise or None,
                              show_progress=True, timeout=args.timeout,
                              second_order=mutants.SECOND_ORDER if args.second_order is None else args.second_order)
    finally:
        pool.close()
    command = "hero mutants " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["mutants"] else "hero mutants"
    Path(args.out).write_text(mutants.markdown(results, command), encoding="utf-8")
    print(mutants.table(mutants.SUMMARY_HEADER, mutants.summary_rows(results)))
    made, killed = sum(r.made for r in results), sum(r.killed for r in results)
    survived = sum(len(r.survivors) for r in results)
    stale = sum(len(r.stale) for r in results)
    equivalent, unchecked = sum(r.equivalent for r in results), sum(r.unchecked for r in results)
    print(f"{made} mutants of {len(results)} exercises in {timer.elapsed:.0f} s: {killed} killed, {equivalent} listed "
          f"as equivalent, {unchecked} differ only on CUDA (not checked here), {survived} survived, {stale} stale "
          f"list entries; report in {args.out}")
    return 1 if survived or stale else 0


def _corpus(args):
    from . import reference

    corpus = reference.load("corpus")
    if args.action == "fetch":
        folder = corpus.fetch(tarball=args.tarball, log=lambda line: print(line, file=sys.stderr))
        print(f"the Tang poems of {corpus.NPM_PACKAGE}@{corpus.VERSION} are cached in {folder}")
        return 0
    source = args.source if args.source != "auto" else ("full" if corpus.is_cached() else "fixture")
    figures = corpus_figures(source, args.poems, args.vocab_size)
    print(figures_table(figures, source))
    return 0


def corpus_figures(source, poems, vocab_size):
    """The corpus figures seed 003 reports, measured on our corpus with the reference tokenizer."""
    from . import reference

    corpus = reference.load("corpus")
    return corpus.figures(reference.load("tokens"), corpus.load_poems(source, limit=poems), vocab_size)


def figures_table(figures, source):
    from . import reference

    seed = reference.load("corpus").SEED_003
    # ours to more places than the seed gives; the seed's as it writes them ("25.5万字", 87.6%, 7.09, 5.672)
    rows = [("poems", "{:,}", "{:,}"), ("characters", "{:,}", "about {:,}"), ("distinct", "{:,}", ""),
            ("vocab_size", "{:,}", "{:,}"), ("coverage", "{:.2%}", "{:.1%}"), ("uniform", "{:.4f}", "{:.2f}"),
            ("unigram", "{:.4f}", "{:.3f}"), ("heldout_unigram", "{:.4f}", "")]
    lines = [f"corpus: {source}", f"{'figure':<18}{'ours':>12}{'seed 003':>16}"]
    for key, ours_form, seed_form in rows:
        theirs = seed_form.format(seed[key]) if key in seed else "-"
        lines.append(f"{key:<18}{ours_form.format(figures[key]):>12}{theirs:>16}")
    lines.append("unigram: in-sample entropy of the character frequencies (<unk> one symbol); heldout_unigram: "
                 "the last 10% of poems under add-one frequencies of the rest")
    return "\n".join(lines)


def _capstone(args):
    """Chapter 8's capstone with the reference: train (and save), or write from the saved model."""
    from . import reference

    corpus, poetry = reference.load("corpus"), reference.load("poetry")
    saved = Path(args.save)
    if args.write is not None:
        if not saved.is_file():
            print(f"hero capstone: no trained model at {saved}: run `hero capstone` first", file=sys.stderr)
            return 2
        lm, coder = poetry.load(saved)
        try:
            poems = poetry.write(lm, coder, list(args.write), temperature=args.temperature, top_k=args.top_k,
                                 seed=args.seed)
        except ValueError as exc:
            print(f"hero capstone: {exc}", file=sys.stderr)
            return 2
        for poem in poems:
            print("\n".join(poetry.as_lines(poem)) + "\n")
        return 0
    if args.source == "full" and not corpus.is_cached():
        print("hero capstone: the full corpus is not cached: run `hero corpus fetch` first (the 300 committed poems "
              "are too few to learn to write from; --source fixture runs anyway)", file=sys.stderr)
        return 2
    settings = poetry.with_steps(args.steps) if args.steps else poetry.CAPSTONE
    data = poetry.prepare(args.source)
    print(f"hero capstone: {settings['steps']} steps, about {poetry.estimated_minutes(data, settings):.1f} min here "
          "(from 5 measured steps; a busier machine takes longer)", file=sys.stderr)
    # the bar on a terminal only, as every bar of the project's (autograder/progress.py): a log gets the summary
    result = poetry.run(data, settings, samples=args.samples, progress=sys.stderr.isatty(),
                        log=lambda line: print(line, file=sys.stderr))
    poetry.save(saved, result["model"], data["coder"], settings)
    for poem in result["poems"][:len(poetry.PROMPTS)]:
        print("\n".join(poetry.as_lines(poem)) + "\n")
    print(f"hero capstone: {poetry.summary(result, data)}; model saved in {saved} "
          f"(hero capstone --write 春 writes from it)")
    return 0


def _autograde(args):
    """`nbgrader autograde` in this course root, with its options spelled as nbgrader's."""
    if bool(args.all) == bool(args.assignments):
        print("hero autograde: name the assignments, or --all for every one with submissions", file=sys.stderr)
        return 2
    options = ["--log-level=WARN"]
    options += ["--force"] if args.force else []
    options += [f"--student={args.student}"] if args.student else []
    options += [f"--HeroAutogradeConverter.ray_address={args.address}"] if args.address else []
    options += [f"--HeroAutogradeConverter.jobs={args.jobs}"] if args.jobs else []
    options += ["--HeroAutogradeConverter.reuse_results=False"] if args.fresh else []
    status = 0
    for assignment in ["*"] if args.all else args.assignments:  # nbgrader reads "*" as every assignment
        status = max(status, subprocess.run([sys.executable, "-m", "nbgrader", "autograde", assignment, *options],
                                            cwd=args.root, preexec_fn=_dies_with(os.getpid())).returncode)
    return status


PR_SET_PDEATHSIG = 1


def _dies_with(parent):
    """A preexec_fn: the child is killed (SIGKILL) the moment `parent` ends, however it ends:
    the instructor's kill -9 of `hero autograde` included, which no handler of ours could see.
    Its sandboxed workers then exit too (their control socket closes with it).  The kernel keeps
    this promise, so it holds where process groups or signal handlers would not (a SIGKILL, a
    child that started its own session)."""
    def arm():
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != parent:
            os._exit(EXIT_GRADER_FAILED)  # no such promise, or the parent is already gone
    return arm


def _gradescope(args):
    """The zip an instructor uploads to Gradescope as it is (autograder/gradescope.py)."""
    from . import gradescope

    path, count, size = gradescope.build(args.assignment, args.output, limit=args.limit, timeout=args.timeout)
    print(f"hero gradescope: {path} ({count} files, {size / 1e6:.1f} MB) grades {args.assignment} whatever is "
          f"uploaded; upload it as the assignment's autograder (Ubuntu 22.04 base image; docs/gradescope.md)")
    return 0


def _demo(args):
    from . import demo

    return demo.run(args.lang)


def _lab(args):
    from hero_transformer import labs

    if args.action == "report":
        if args.build and not any(labs.saved_any(name) for name in labs.all_labs()):
            print(f"hero lab report: no saved results under {labs.labs_dir()}; run `hero lab run NAME --quick` first "
                  f"(every row below says 'not run')", file=sys.stderr)
        print(labs.report_markdown(source="build" if args.build else "recorded"), end="")
        return 0
    if args.action == "list":
        from hero_transformer.labs import runner

        from . import lab_times

        for lab in labs.all_labs().values():
            print(f"{lab.name:<18} {lab.title_en}")
            for mode, setting in lab.settings.items():
                runs, seeds = len(runner.seeded_runs(setting, lab.runs)), len(setting["seeds"])
                print(f"  {mode + ':':<7}{runs:>3} run{'s' if runs != 1 else ' '} ({seeds} seeds)  "
                      f"{lab_times.describe(lab, mode)}")
        return 0
    if args.names and args.all:
        print(f"hero lab {args.action}: name labs or give --all, not both", file=sys.stderr)
        return 2
    if not args.names and not args.all:
        print(f"hero lab {args.action}: name a lab, or --all (hero lab list shows them)", file=sys.stderr)
        return 2
    try:
        chosen = list(labs.all_labs().values()) if args.all else [labs.get(name) for name in dict.fromkeys(args.names)]
    except KeyError as exc:
        print(f"hero lab {args.action}: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.action == "record":
        for lab in chosen:
            try:
                path = labs.record(lab, args.mode)
            except (FileNotFoundError, ValueError) as exc:
                print(f"hero lab record: {exc}", file=sys.stderr)
                return 2
            print(f"recorded {lab.name} ({args.mode}) in {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
        return 0
    if args.out and len(chosen) != 1:
        print("hero lab run: --out names the folder of one lab's grid", file=sys.stderr)
        return 2
    from hero_transformer import cluster
    from hero_transformer.labs import grid, runner

    try:
        runner.run_labs(chosen, args.mode, args.device, out=args.out, fresh=args.fresh,
                        scheduler="loop" if args.loop else "ray", address=args.address,
                        resources=grid.Resources(cpus=args.cpus_per_run, gpus=args.gpus_per_run))
    except (RuntimeError, cluster.RayUnavailable) as exc:  # e.g. --device cuda without a GPU, a lost run
        print(f"hero lab run: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="hero", description="hero_transformer course tools")
    commands = parser.add_subparsers(dest="command", required=True)

    grade = commands.add_parser("grade", help="grade submission folders shaped like student/<assignment>/")
    grade.add_argument("paths", nargs="+", help="submission folders")
    grade.add_argument("--assignment", help="the assignment every folder is graded as (required with --gradescope, "
                                            "--junit, --github-summary; without it, a folder must fit exactly one: "
                                            "by its notebook or its name)")
    grade.add_argument("--format", choices=("table", "json"), default="table")
    grade.add_argument("--lang", choices=("zh", "en"), default="zh", help="feedback language")
    grade.add_argument("--details", action="store_true", help="print the full feedback of every lost item")
    grade.add_argument("--timeout", type=float, default=10.0, help="seconds of CPU time per exercise (default 10; the wall clock only stops a task that sleeps)")
    grade.add_argument("--fail-under", type=float, metavar="PERCENT",
                       help="exit 1 when a submission scores below PERCENT of the maximum")
    grade.add_argument("--gradescope", metavar="FILE", help="also write Gradescope's results.json (one submission)")
    grade.add_argument("--junit", metavar="FILE", help="also write JUnit XML")
    grade.add_argument("--github-summary", metavar="FILE", nargs="?", const="",
                       help="append a markdown job summary (default: $GITHUB_STEP_SUMMARY) and print one "
                            "::error annotation per item that lost points")
    grade.set_defaults(run=_grade)

    rel = commands.add_parser("release", help="rebuild student/ and solutions/")
    rel.add_argument("assignments", nargs="*", metavar="ASSIGNMENT", help="only these assignments (default: all)")
    rel.add_argument("--output", help="write the trees under this folder instead of the repository")
    rel.set_defaults(run=_release)

    start = commands.add_parser("start", help="copy an assignment's release into a working folder of your own")
    start.add_argument("assignment", help="assignment id, e.g. ch05_block, or labs")
    start.add_argument("dir", nargs="?", help="the folder to create (default: work/<assignment>)")
    start.set_defaults(run=_start)

    sam = commands.add_parser("samples", help="write sample submissions: OUTPUT/<assignment>/<sample>/ (reference, "
                                              "stubs, one per fault, variant, forbidden shortcut and hostile attempt)")
    sam.add_argument("output", help="folder to write into (each assignment's folder in it is replaced)")
    sam.add_argument("--assignment", help="only this assignment")
    sam.add_argument("--no-hostile", action="store_true", help="leave out the hostile attempts")
    sam.set_defaults(run=_samples)

    mut = commands.add_parser("mutants", help="grade mutants of every reference body through the real grader: "
                                              "which the hidden tests kill, which survive (report in markdown)")
    mut.add_argument("assignments", nargs="*", metavar="ASSIGNMENT", help="only these assignments (default: all)")
    mut.add_argument("--exercise", action="append", metavar="ID", help="only this exercise (repeatable)")
    mut.add_argument("--sample", type=int, metavar="N", help="only a fixed sample of N mutants per exercise")
    mut.add_argument("--timeout", type=float, default=10.0, help="seconds of CPU time per mutant (default 10)")
    mut.add_argument("--second-order", type=int, default=None, metavar="N",
                     help="mutants of two edits per exercise, a fixed sample of the pairs (default: "
                          "SECOND_ORDER in autograder/mutants.py)")
    mut.add_argument("--out", default="mutants-report.md", help="the report (default: mutants-report.md)")
    mut.set_defaults(run=_mutants)

    cor = commands.add_parser("corpus", help="the Tang-poem corpus: fetch it (npm pack, integrity-checked) or "
                                             "print its figures against seed 003's")
    cor.add_argument("action", choices=("fetch", "stats"))
    cor.add_argument("--tarball", help="fetch: use this downloaded chinese-poetry-2.0.1.tgz instead of npm pack")
    cor.add_argument("--source", choices=("auto", "fixture", "full"), default="auto",
                     help="stats: the cached full corpus, the committed 300-poem fixture, or the first found (auto)")
    cor.add_argument("--poems", type=int, default=4003, help="stats: the first N poems (default: seed 003's 4,003)")
    cor.add_argument("--vocab-size", type=int, default=1200, help="stats: the vocabulary size, <unk> included")
    cor.set_defaults(run=_corpus)

    cap = commands.add_parser("capstone", help="chapter 8's capstone with the reference: train the poem-writing "
                                                "model (4-5 minutes on 2 idle CPU cores), or write from the saved one")
    cap.add_argument("--source", choices=("full", "fixture"), default="full",
                     help="the cached full corpus (default; `hero corpus fetch`) or the 300 committed poems")
    cap.add_argument("--steps", type=int, help="train this many steps instead of the capstone's own number")
    cap.add_argument("--samples", type=int, default=8, help="poems written per prompt character for the figures "
                                                             "(default 8)")
    cap.add_argument("--save", default="build/capstone/model.pt", help="where the trained model is kept")
    cap.add_argument("--write", metavar="PROMPTS", help="write one poem per character of PROMPTS with the saved "
                                                        "model instead of training (characters of the vocabulary)")
    cap.add_argument("--temperature", type=float, default=0.8, help="--write: sampling temperature (default 0.8)")
    cap.add_argument("--top-k", type=int, default=20, help="--write: sample among the k likeliest (default 20)")
    cap.add_argument("--seed", type=int, default=0, help="--write: the random seed of the sampling")
    cap.set_defaults(run=_capstone)

    auto = commands.add_parser("autograde", help="nbgrader autograde, the whole class at once and resumably: every "
                                                 "submission graded in one pool (or on Ray), then recorded")
    auto.add_argument("assignments", nargs="*", metavar="ASSIGNMENT")
    auto.add_argument("--all", action="store_true", help="every assignment with submissions, under one bar")
    auto.add_argument("--student", help="only this student (nbgrader's --student)")
    auto.add_argument("--force", action="store_true", help="grade again what is already recorded (nbgrader's "
                                                           "--force; results kept for the same bytes are reused)")
    auto.add_argument("--fresh", action="store_true", help="with --force: reuse no kept result")
    auto.add_argument("--address", help="grade on this Ray cluster (HOST:PORT); default: here, without Ray")
    auto.add_argument("--jobs", type=int, default=0, help="sandboxed grading workers (default: the pool's own)")
    auto.add_argument("--root", default=".", help="the course root (default: the current folder)")
    auto.set_defaults(run=_autograde)

    gs = commands.add_parser("gradescope", help="write a Gradescope autograder zip for one assignment: setup.sh, "
                                                "run_autograder, the grader and the assignment fixed inside")
    gs.add_argument("assignment", help="the assignment every submission is graded as, e.g. ch05_block")
    gs.add_argument("output", help="the zip to write, e.g. build/autograder.zip")
    gs.add_argument("--timeout", type=float, default=10.0, help="seconds of CPU time per exercise (default 10)")
    gs.add_argument("--limit", type=int, default=540, help="seconds one submission may take in all before it gets a "
                                                           "results.json saying so (default 540: under Gradescope's "
                                                           "default 10-minute limit)")
    gs.set_defaults(run=_gradescope)

    demo = commands.add_parser("demo", help="release, autograde generated samples with nbgrader, show grades")
    demo.add_argument("--lang", choices=("zh", "en"), default="zh")
    demo.set_defaults(run=_demo)

    lab = commands.add_parser("lab", help="seeds 003 and 004's experiments: list them, or run one (resumable; "
                                          "JSON and plots under build/labs/NAME/MODE/)")
    lab.add_argument("action", choices=("list", "run", "record", "report"),
                     help="record: copy finished results into the committed hero_transformer/labs/results/; "
                          "report: every claim judged on the committed quick and full results, as a markdown table")
    lab.add_argument("names", nargs="*", metavar="NAME", help="run: the labs (hero lab list shows them)")
    lab.add_argument("--all", action="store_true", help="run: every lab, all grids scheduled together")
    size = lab.add_mutually_exclusive_group()
    size.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="the same question at a size that takes minutes on 2 CPU cores (default)")
    size.add_argument("--full", dest="mode", action="store_const", const="full", help="the seed's configuration")
    size.add_argument("--tiny", dest="mode", action="store_const", const="tiny", help="seconds; for tests")
    lab.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="where the models run (default cpu)")
    lab.add_argument("--out", help="write here instead of build/labs/NAME/MODE ($HERO_LABS_DIR moves build/labs)")
    lab.add_argument("--fresh", action="store_true", help="redo runs already finished")
    lab.add_argument("--build", action="store_true", help="report: from this machine's results under build/labs "
                                                          "instead of the committed ones")
    lab.add_argument("--address", help="run on this Ray cluster (HOST:PORT of `ray start --head`); default: a Ray "
                                       "started for this command on the loopback address, stopped at its end")
    lab.add_argument("--cpus-per-run", type=int, default=1, help="CPUs (torch threads) one run takes (default 1)")
    lab.add_argument("--gpus-per-run", type=float, default=0.25,
                     help="with --device cuda: the share of a GPU one run takes (default 0.25: 4 runs a GPU)")
    lab.add_argument("--loop", action="store_true", help="run the grid in this process, one run after another, "
                                                        "without Ray (what a notebook does)")
    lab.set_defaults(run=_lab, mode="quick")

    args = parser.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `hero grade ... | head` ends quietly
    try:
        return args.run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the grader itself failed: never a silent zero
        import traceback

        from .report import printable

        # a message may quote a submission's file name: no control character or workflow command
        print(printable(traceback.format_exc()), end="", file=sys.stderr)
        _say(f"hero {args.command}: the grader failed: {exc}")
        return EXIT_GRADER_FAILED


if __name__ == "__main__":
    sys.exit(main())
