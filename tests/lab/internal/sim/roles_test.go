package sim

import (
	"testing"

	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestAuthorize(t *testing.T) {
	admin := role.MakeSet(role.Admin)
	operator := role.MakeSet(role.Operator)
	reader := role.MakeSet(role.Reader)
	backup := role.MakeSet(role.EtcdBackup)
	none := role.MakeSet()

	for _, tc := range []struct {
		method string
		roles  role.Set
		ok     bool
	}{
		{"/machine.MachineService/Version", reader, true},
		{"/machine.MachineService/Hostname", reader, true},
		{"/machine.MachineService/EtcdMemberList", reader, true},
		{"/machine.MachineService/EtcdMemberList", backup, true},
		{"/machine.MachineService/EtcdStatus", reader, true},
		{"/storage.StorageService/Disks", reader, true},
		{"/cosi.resource.State/Get", reader, true},
		{"/cosi.resource.State/List", operator, true},
		{"/machine.MachineService/ApplyConfiguration", reader, true}, // the handler refuses it outside maintenance
		{"/machine.MachineService/Reset", reader, false},
		{"/machine.MachineService/Reset", operator, false},
		{"/machine.MachineService/Reset", admin, true},
		{"/machine.MachineService/Reboot", operator, true},
		{"/machine.MachineService/Reboot", reader, false},
		{"/machine.MachineService/EtcdLeaveCluster", operator, false},
		{"/machine.MachineService/EtcdRemoveMemberByID", reader, false},
		{"/machine.MachineService/EtcdForfeitLeadership", admin, true},
		{"/cosi.resource.State/Update", operator, false},
		{"/machine.MachineService/Version", none, false},
		{"/machine.MachineService/SomethingNew", operator, false}, // not in the table: admin only
		{"/machine.MachineService/SomethingNew", admin, true},
	} {
		err := Authorize(tc.method, tc.roles)
		if (err == nil) != tc.ok {
			t.Errorf("%s as %v: %v", tc.method, tc.roles.Strings(), err)
		}

		if err != nil && (status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != "not authorized") {
			t.Errorf("%s: error %v", tc.method, err)
		}
	}
}

func TestCOSIAccess(t *testing.T) {
	admin := role.MakeSet(role.Admin)
	reader := role.MakeSet(role.Reader)

	if err := cosiAccess(admin, "config", "MachineConfigs.config.talos.dev"); err != nil {
		t.Errorf("admin machine config: %v", err)
	}

	if err := cosiAccess(reader, "config", "MachineConfigs.config.talos.dev"); status.Convert(err).Message() != "not authorized" {
		t.Errorf("reader machine config: %v", err)
	}

	if err := cosiAccess(reader, "runtime", "Disks.block.talos.dev"); err != nil {
		t.Errorf("reader disks: %v", err)
	}

	err := cosiAccess(admin, "runtime", "OSRootSecrets.secrets.talos.dev")
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != `resource type "OSRootSecrets.secrets.talos.dev" is not supported` {
		t.Errorf("unsupported type: %v", err)
	}

	err = cosiAccess(admin, "block", "Disks.block.talos.dev")
	if status.Convert(err).Message() != `namespace "block" is not supported` {
		t.Errorf("namespace block: %v", err)
	}
}
