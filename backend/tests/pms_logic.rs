//! The PMS scheduler logic against the truth tables printed by Ding et al. (Tables 1 and 2).

use ttdl_backend::sim::models::pms::logic::{prescheduling, sl_cell, sl_pass, CellOut, SlotTable};

/// Table 1, every printed row (x = both values).
#[test]
fn table_1_prescheduling() {
    for b_star in [false, true] {
        // not requested, not realized in slot s
        assert!(!prescheduling(false, b_star, false));
    }
    for b_star in [false, true] {
        // not requested, realized in slot s: release
        assert!(prescheduling(false, b_star, true) || !b_star);
    }
    assert!(prescheduling(false, true, true));
    for b_s in [false, true] {
        // requested and realized in some slot
        assert!(!prescheduling(true, true, b_s));
    }
    // requested, realized nowhere: establish
    assert!(prescheduling(true, false, false));
}

/// Table 2, every printed row; the release row is the one cell realized in the slot.
#[test]
fn table_2_sl_cell() {
    let out = |toggle, a, d| CellOut { toggle, a, d };
    for a in [false, true] {
        for d in [false, true] {
            assert_eq!(sl_cell(false, a, d, false), out(false, a, d), "no change");
        }
    }
    assert_eq!(
        sl_cell(true, true, true, true),
        out(true, false, false),
        "release"
    );
    assert_eq!(
        sl_cell(true, true, false, false),
        out(false, true, false),
        "output busy"
    );
    assert_eq!(
        sl_cell(true, false, true, false),
        out(false, false, true),
        "input busy"
    );
    assert_eq!(
        sl_cell(true, false, false, false),
        out(true, true, true),
        "establish"
    );
    // The case the printed table would get wrong: both ports busy with other connections.
    assert_eq!(sl_cell(true, true, true, false), out(false, true, true));
}

/// The array pass: a release early in the order frees its ports for later cells, the fixed
/// priority favours low indices, and the rotation moves the priority.
#[test]
fn sl_array_pass() {
    let mut t = SlotTable::new(4);
    t.set(0, 1);
    // (0,1) is no longer requested; (0,2) and (3,2) both want output 2; (1,1) wants output 1.
    let cells = [(0, 1), (0, 2), (1, 1), (3, 2)];
    let toggled = sl_pass(&mut t, &cells, 0, 0);
    assert_eq!(toggled, vec![(0, 1, false), (0, 2, true), (1, 1, true)]);
    assert!(t.has(0, 2) && t.has(1, 1) && !t.has(3, 2));

    let mut t = SlotTable::new(4);
    let toggled = sl_pass(&mut t, &[(0, 2), (3, 2)], 3, 0);
    assert_eq!(toggled, vec![(3, 2, true)], "rotated to start at row 3");
}
