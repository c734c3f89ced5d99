from referee.simulation.workbench import *
from referee.tracker.workbench import WorkbenchTracker
from referee.observation import WorkbenchObservation
ok = bad = 0
for seed in range(19, 45):
    try:
        r = play_recording(RecordingSpec(seed=seed))
    except RecordingError:
        continue
    for ns in range(2):
        t = WorkbenchTracker(r.names, r.builders)
        for item in inputs(r, observe_truth(Noise(), 1000 * ns + seed)):
            if isinstance(item, WorkbenchObservation): t.observe(item)
            elif item.end_of_turn is not None: t.end_turn(item.end_of_turn)
            elif t.state.phase == "scoring": t.reveal(item.reveal)
        got = sorted((w.turn, w.code) for w in t.warnings)
        want = sorted((i['turn'], i['code']) for i in r.injections())
        sc = [(s['seat'], s['total']) for s in t.scores()] == [(s['seat'], s['total']) for s in r.scores()]
        if got == want and sc and t.state.game_over: ok += 1
        else:
            bad += 1; print(seed, ns, "scores ok" if sc else "SCORES DIFFER", t.state.phase, [g for g in got if g not in want], [w for w in want if w not in got])
print("exact", ok, "of", ok + bad)
