package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
)

// leaveFailDelay is how long a graceful reset tries to reach a down etcd before it gives up
// (Talos's etcd client dial timeout is 5 s; the lab is quicker).
const leaveFailDelay = time.Second

// sequenceDelay is how long a node keeps answering after accepting a Reset, Reboot or an
// ApplyConfiguration that reboots, so that the reply reaches the caller before the listener
// closes (on Talos the sequence takes seconds).
const sequenceDelay = 250 * time.Millisecond

// reset validates a Reset request as machined does, starts the reset sequence in the background
// and returns its actor ID at once. Validation errors are plain errors (code Unknown), as in
// Talos.
//
//nolint:gocyclo
func (n *Node) reset(req *machine.ResetRequest) (string, error) {
	s := n.sim

	s.mu.Lock()
	defer s.mu.Unlock()

	if len(req.GetUserDisksToWipe()) > 0 {
		if req.GetMode() == machine.ResetRequest_SYSTEM_DISK {
			return "", errors.New("reset failed: invalid input, wipe mode SYSTEM_DISK doesn't support UserDisksToWipe parameter")
		}

		for _, dev := range req.GetUserDisksToWipe() {
			idx := slices.IndexFunc(n.Spec.Disks, func(d DiskSpec) bool { return "/dev/"+d.Name == dev })
			if idx < 0 {
				return "", fmt.Errorf("reset user disk failed: device %s wasn't found", dev)
			}

			if n.Spec.Disks[idx].Readonly {
				return "", fmt.Errorf("reset user disk failed: device %s is readonly", dev)
			}

			if n.installed && dev == n.installDiskLocked() {
				return "", fmt.Errorf("reset user disk failed: device %s is the system disk", dev)
			}
		}
	}

	var labels []string

	if len(req.GetSystemPartitionsToWipe()) > 0 {
		if req.GetMode() == machine.ResetRequest_USER_DISKS {
			return "", errors.New("reset failed: invalid input, wipe mode USER_DISKS doesn't support SystemPartitionsToWipe parameter")
		}

		for _, spec := range req.GetSystemPartitionsToWipe() {
			vol := n.volumeLocked(spec.GetLabel())
			if vol == nil {
				return "", fmt.Errorf("failed to get volume status with label %q: resource VolumeStatuses.block.talos.dev(runtime/%s@undefined) doesn't exist", spec.GetLabel(), spec.GetLabel())
			}

			if vol.location == "" {
				return "", fmt.Errorf("failed to reset: volume %q is not located", spec.GetLabel())
			}

			if spec.GetWipe() {
				labels = append(labels, spec.GetLabel())
			}
		}
	}

	wholeDisk := req.GetMode() != machine.ResetRequest_USER_DISKS && len(req.GetSystemPartitionsToWipe()) == 0
	if wholeDisk && !n.installed {
		return "", errors.New("system disk paths lookup failed: system disk not found")
	}

	wipe := labels
	if wholeDisk {
		wipe = []string{"system-disk"}
	}

	st := &ResetStatus{
		ActorID:  RandomUUID(),
		Graceful: req.GetGraceful(),
		Reboot:   req.GetReboot(),
		Mode:     req.GetMode().String(),
		Wipe:     append(wipe, req.GetUserDisksToWipe()...),
		State:    "running",
	}
	n.lastReset = st

	s.log.Printf("%s: reset request received. actorID: %s (graceful=%v, wipe=%v)", n.Spec.Name, st.ActorID, st.Graceful, st.Wipe)

	s.goAfter(0, func() { n.runReset(st, labels, wholeDisk) })

	return st.ActorID, nil
}

// runReset is the reset sequence: leave etcd (graceful, control planes), then wipe and reboot.
// The leave has no error handler: if it fails the reset aborts and nothing is wiped; with a hung
// etcd it never finishes.
func (n *Node) runReset(st *ResetStatus, labels []string, wholeDisk bool) {
	s := n.sim

	s.mu.Lock()

	if n.resetting {
		st.State, st.Error = "aborted", "another sequence is already running"
		s.mu.Unlock()

		return
	}

	n.resetting = true
	n.stage = stageResetting
	epoch := n.epoch
	leave := st.Graceful && n.mode == ModeConfigured && n.isControlPlane()
	delay := n.rebootDelay
	s.mu.Unlock()

	if leave {
		s.mu.Lock()
		st.State = "leaving-etcd"
		s.mu.Unlock()

		if err := n.leaveForReset(epoch); err != nil {
			s.mu.Lock()
			n.resetting = false

			if n.epoch == epoch {
				n.stage = stageRunning
			}

			st.State, st.Error = "aborted", "leaveEtcd: "+err.Error()
			s.mu.Unlock()
			s.log.Printf("%s: reset failed: %s", n.Spec.Name, st.Error)

			return
		}
	}

	s.mu.Lock()
	n.resetting = false

	if n.epoch != epoch {
		st.State, st.Error = "aborted", "superseded by a change through the control API"
		s.mu.Unlock()

		return
	}

	st.State = "rebooting"
	s.mu.Unlock()

	select {
	case <-time.After(sequenceDelay):
	case <-s.ctx.Done():
		return
	}

	wipe := func() {
		n.applyWipeLocked(labels, wholeDisk)
		st.State = "done"
	}

	if !st.Reboot {
		n.stopServing()

		s.mu.Lock()
		n.epoch++
		wipe()
		n.power = powerOff
		n.stage = "shutting down"
		st.State = "powered-off"
		s.mu.Unlock()
		s.log.Printf("%s: reset done, powered off", n.Spec.Name)

		return
	}

	n.powerCycle(delay, stageRebooting, wipe)
}

// leaveForReset runs the leave step, waiting while the local etcd hangs.
func (n *Node) leaveForReset(epoch int) error {
	s := n.sim

	for {
		s.mu.Lock()

		if n.epoch != epoch {
			s.mu.Unlock()

			return errors.New("superseded by a change through the control API")
		}

		if n.cluster == nil {
			s.mu.Unlock()

			return nil
		}

		hang, err := n.etcdLeave()
		kick := n.kick
		s.mu.Unlock()

		if !hang {
			if err != nil {
				select {
				case <-time.After(leaveFailDelay):
				case <-s.ctx.Done():
				}
			}

			return err
		}

		select {
		case <-kick:
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
	}
}

// applyWipeLocked is the state after the wipe: STATE gone means maintenance mode with a new
// node identity; EPHEMERAL gone means the etcd data is gone (the member, if still registered,
// becomes stale); the whole system disk gone also means "not installed".
func (n *Node) applyWipeLocked(labels []string, wholeDisk bool) {
	stateWiped := wholeDisk || slices.Contains(labels, "STATE")
	ephemeralWiped := wholeDisk || slices.Contains(labels, "EPHEMERAL")

	if ephemeralWiped {
		n.memberID = 0
		n.cniConfs = nil // /etc/cni is an overlay on EPHEMERAL before Talos 1.14 (cni.go)
	}

	if wholeDisk {
		n.installed = false
	}

	if stateWiped {
		n.enterMaintenanceLocked()
	}
}
