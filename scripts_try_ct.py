import sys
from referee.simulation.workbench import *
from referee.tracker.workbench import WorkbenchTracker
from referee.observation import WorkbenchObservation
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 19
noisy = len(sys.argv) > 2
r = play_recording(RecordingSpec(seed=seed))
t = WorkbenchTracker(r.names, r.builders)
cam = observe_truth(Noise() if noisy else Noise.none(), seed)
for item in inputs(r, cam):
    if isinstance(item, WorkbenchObservation):
        u = t.observe(item)
    elif item.end_of_turn is not None:
        u = t.end_turn(item.end_of_turn)
    else:
        u = t.reveal(item.reveal)
    for w in u.warnings:
        print("WARN", w.turn, w.kind, w.code, w.message, "| fix:", w.remedy)
    for n in u.notes:
        print("note", n)
print([(s['seat'], s['total']) for s in t.scores()])
print([(s['seat'], s['total']) for s in r.scores()])
print(r.injections())
print(t.state.phase, t.state.turn, r.final.turn)
