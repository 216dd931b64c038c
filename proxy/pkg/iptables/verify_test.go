package iptables

import "testing"

func TestRuleKey(t *testing.T) {
	tests := []struct {
		name       string
		ours, save string
		same       bool
	}{
		{name: "DNAT with a comment",
			ours: `-A SKIFF-SEP-X -m comment --comment ns/a:http -m tcp -p tcp -j DNAT --to-destination 10.244.1.5:8080`,
			save: `-A SKIFF-SEP-X -p tcp -m comment --comment "ns/a:http" -m tcp -j DNAT --to-destination 10.244.1.5:8080`, same: true},
		{name: "address /32 and a negation",
			ours: `-A SKIFF-SVC-X -m comment --comment "ns/a:http cluster IP" -m tcp -p tcp -d 10.96.0.10 --dport 80 ! -s 10.244.0.0/16 -j SKIFF-MARK-MASQ`,
			save: `-A SKIFF-SVC-X ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j SKIFF-MARK-MASQ`, same: true},
		{name: "the negation moved to another option",
			ours: `-A SKIFF-SVC-X -d 10.96.0.10 ! -s 10.244.0.0/16 -j SKIFF-MARK-MASQ`,
			save: `-A SKIFF-SVC-X -s 10.244.0.0/16 ! -d 10.96.0.10/32 -j SKIFF-MARK-MASQ`, same: false},
		{name: "probability with eleven decimals",
			ours: `-A SKIFF-SVC-X -m comment --comment "ns/a:http -> 10.244.1.5:8080" -m statistic --mode random --probability 0.3333333333 -j SKIFF-SEP-Y`,
			save: `-A SKIFF-SVC-X -m comment --comment "ns/a:http -> 10.244.1.5:8080" -m statistic --mode random --probability 0.33333333349 -j SKIFF-SEP-Y`, same: true},
		{name: "recent's defaults",
			ours: `-A SKIFF-SVC-X -m comment --comment "a -> b" -m recent --name SKIFF-SEP-Y --rcheck --seconds 600 --reap -j SKIFF-SEP-Y`,
			save: `-A SKIFF-SVC-X -m comment --comment "a -> b" -m recent --rcheck --seconds 600 --reap --name SKIFF-SEP-Y --mask 255.255.255.255 --rsource -j SKIFF-SEP-Y`, same: true},
		{name: "another destination",
			ours: `-A SKIFF-SEP-X -m tcp -p tcp -j DNAT --to-destination 10.244.1.5:8080`,
			save: `-A SKIFF-SEP-X -p tcp -m tcp -j DNAT --to-destination 10.244.9.9:8080`, same: false},
		{name: "another chain",
			ours: `-A SKIFF-SEP-X -s 10.244.1.5 -j SKIFF-MARK-MASQ`,
			save: `-A SKIFF-SEP-Z -s 10.244.1.5/32 -j SKIFF-MARK-MASQ`, same: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c1, k1, ok1 := RuleKey(tt.ours)
			c2, k2, ok2 := RuleKey(tt.save)
			if !ok1 || !ok2 {
				t.Fatalf("RuleKey could not read the rules: %v %v", ok1, ok2)
			}
			if got := c1 == c2 && k1 == k2; got != tt.same {
				t.Fatalf("same = %v, want %v\n%q\n%q", got, tt.same, k1, k2)
			}
		})
	}
	if _, _, ok := RuleKey(`-A X -m comment --comment "unterminated`); ok {
		t.Fatal("an unterminated quote was read")
	}
}
