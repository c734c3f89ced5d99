import sys
from referee.simulation.workbench import *
from referee.tracker.workbench import WorkbenchTracker
from referee.observation import WorkbenchObservation
seed = int(sys.argv[1]); lo, hi = int(sys.argv[2]), int(sys.argv[3])
r = play_recording(RecordingSpec(seed=seed))
t = WorkbenchTracker(r.names, r.builders)
cam = observe_truth(Noise(), seed)
for item in inputs(r, cam):
    turn = t.state.turn + 1
    if isinstance(item, WorkbenchObservation):
        u = t.observe(item)
        if lo <= turn <= hi and t._pending is not None:
            v = t._view
            print("  frame", item.frame, "pending", t._pending, "complete", v.complete(4), "stale", sorted(v.stale, key=str), "unsure∩diff", v.differences(t.state) & v.unsure, "diff", v.differences(t.state))
    elif item.end_of_turn is not None:
        u = t.end_turn(item.end_of_turn)
        if lo <= turn <= hi: print("EOT turn", turn, [s.to_json() for s in u.steps], u.notes)
    else:
        break
    if lo <= turn <= hi:
        for s in u.steps: print("   step", turn, s.to_json())
for tt in r.turns[lo-2:hi]: print(tt.turn, tt.player, [s.to_json() for s in tt.steps if s.player is not None], tt.code)
