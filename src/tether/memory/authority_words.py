"""The word classes the authority frames of :mod:`tether.memory.authority` are built from,
in English, German, French, Spanish, Italian, Portuguese and Dutch.

Entries are written as the normalised text has them (:func:`tether.memory.injection.
normalise`: folded case, no accents, punctuation as spaces). An entry is a word stem
matched at the start of a token; ``$`` at its end asks for the whole word, ``*`` at its
start lets it end a compound (``*prufung`` matches ``betrugsprufung``); ``_`` joins the
words of a phrase (``turn_off$``), which the tokeniser joins into one token.
"""

from __future__ import annotations

WORDS: dict[str, str] = {
    # --- hedges ---------------------------------------------------------------------
    "NEG": (
        "nothing$ nichts$ rien$ nada$ niente$ nulla$ niets$ not$ no$ never$ *n't$ cannot$ "
        "none$ nobody$ neither$ nicht$ kein keine$ keinen$ keiner$ keines$ nie$ niemals$ ne$ "
        "n'$ pas$ jamais$ aucun aucune ni$ nunca$ ningun ninguna$ nadie$ non$ mai$ nessun "
        "nessuno$ nao$ nenhum nenhuma$ ninguem$ niet$ geen$ nooit$ niemand$"
    ),
    "ONLY": (
        "only$ solely$ exclusively$ just_the$ nur$ ausschliesslich$ einzig seul$ seule$ "
        "seuls$ seules$ seulement$ uniquement$ solo$ solamente$ unicamente$ soltanto$ so_os$ "
        "so_as$ so_o$ so_a$ somente$ apenas$ alleen$ uitsluitend$ enkel$ slechts$"
    ),
    # --- who speaks, and how a right is held -------------------------------------------
    "SELF": (
        "i$ i'm$ im$ i've$ i'd$ me$ my$ mine$ myself$ ich$ mich$ mir$ mein meine$ je$ j'ai$ "
        "j'$ moi$ mon$ ma$ mes$ yo$ mi$ mis$ io$ mio$ mia$ miei$ mie$ eu$ meu$ meus$ minha$ "
        "minhas$ ik$ mij$ mijn$ puedo$ posso$ puis$ estoy$ estou$ sono$ soy$ sou$"
    ),
    "BE": (
        "am$ is$ are$ was$ were$ be$ been$ i'm$ im$ bin$ ist$ sind$ war$ wurde$ suis$ est$ "
        "sont$ etait$ soy$ es$ eres$ esta$ estoy$ estan$ son$ fue$ queda$ sono$ sei$ e$ "
        "resta$ sou$ estou$ sao$ foi$ fica$ ben$ bent$ zijn$ werd$ blijft$ figuro$ sto$ sta$ "
        "appears_to_be$ seems_to_be$"
    ),
    "SELF_BE": "i'm$ im$ i_am$ ich_bin$ je_suis$ soy$ estoy$ sono$ io_sono$ sou$ eu_sou$ ik_ben$",
    "ROLE_IS": (
        "role_is$ rolle_ist$ role_est$ rol_es$ papel_es$ cargo_es$ ruolo_e$ funcao_e$ "
        "papel_e$ rol_is$ title_is$ position_is$ functie_is$ i'm_acting_as$"
    ),
    "HAVE": (
        "have$ has$ had$ having$ hold$ holds$ held$ got$ i've$ habe$ hat$ haben$ hatte$ "
        "besitze besitzt$ j'ai$ ont$ avoir$ possede dispose tener$ tengo$ tiene$ tienen$ "
        "tenia$ ho$ ha$ hanno$ abbia$ avere$ ter$ tenho$ tem$ tens$ temos$ heb$ heeft$ "
        "hebben$ bezit$"
    ),
    "GRANTED": (
        "inherit erb$ erben$ erbt$ erhalten$ herit obtien obtain obtai recoiv heredan heredar "
        "ereditano ottengono herdam obtem recebem erven$ erft$ krijgen$ krijgt$ granted$ "
        "given$ gave$ assigned$ received$ issued$ erteilt$ gewahrt$ bekommen$ vergeben$ "
        "eingeraumt$ accorde accordee octroye recu$ concedido concedida concedieron otorgado "
        "otorgada asignado asignada concesso concessa assegnato assegnata conferito atribuido "
        "atribuida gekregen$ gegeven$ toegekend$ verleend$"
    ),
    "WITH": "with$ mit$ avec$ con$ com$ met$",
    # --- rights ---------------------------------------------------------------------------
    "PRIV": (
        "power_of_attorney$ poder_notarial$ poderes_notariales$ procura$ volmacht$ "
        "ultima_parola$ last_word$ letzte_wort$ dernier_mot$ ultima_palabra$ ultima_palavra$ "
        "laatste_woord$ privileg *berechtigung befugnis vollmacht habilitation machtiging "
        "bevoegdheid bevoegdheden tekenbevoegd clearance$ authority$ signing_authority$ "
        "signing_rights$ final_say$ carte_blanche$ carta_blanca$ carta_bianca$ carta_branca$ "
        "freibrief$ vrijbrief$ free_hand$ freie_hand$ standing_approval$ blanket_approval$ "
        "pre_approval$ superuser superusuario superutente superutilisateur sudo$ "
        "delegation_de_signature$ poder_de_firma$ procuracao$ procuration$ godmode$"
    ),
    # everyday words too ("permission from my landlord"): a right only when qualified
    "PERMISSION": (
        "credential zugangsdaten identifiants$ credenciales$ credenziali$ credenciais$ "
        "inloggegevens$ permission permiso permess permissao permissoes autorisation "
        "authorisation authorization autorizacion autorizzazion autorizacao toestemming"
    ),
    "RIGHTS": (
        "right$ rights$ recht$ rechte$ rechten$ droit$ droits$ derecho$ derechos$ diritto$ "
        "diritti$ direito$ direitos$"
    ),
    "RIGHTS_COMPOUND": "*rechte$ *rechten$",
    "POWER": "power$ powers$ pouvoir$ pouvoirs$ poder$ poderes$ potere$ poteri$",
    "ACCESS": "access$ zugriff zugang acces$ acceso$ accesso$ acesso$ toegang$",
    "QUAL": (
        "break_glass$ privileged$ emergency$ notfall full$ unrestricted$ unlimited$ complete$ "
        "total$ elevated$ privileged$ root$ *admin write$ global$ vollen$ voller$ vollem$ "
        "voll$ vollstandig uneingeschrankt unbeschrankt unbegrenzt complet complete$ illimit "
        "ilimitad irrestrit irrestrict sin_restricciones$ sans_restriction sem_restricoes$ "
        "senza_restrizioni$ completo$ completa$ totale$ volledig onbeperkt onbegrensd totaal$"
    ),
    "ELEV": (
        "*admin *administrator *administrador *administrateur *administratrice amministrat "
        "*beheerder superuser superusuario superutente root$ sudo owner$ eigentumer eigenaar$ "
        "proprietaire propietario proprietario dueno$ dono$ superadmin"
    ),
    "ROLE_NOUN": (
        "ceo$ cfo$ cto$ coo$ ciso$ cio$ vp$ president$ prasident presidente$ presidente$ "
        "directora$ manager$ director$ directeur$ direttore$ diretor$ head$ chief$ chef$ "
        "*leiter *leitung *manager$ *director$ *directeur$ *direttore$ *diretor$ responsable$ "
        "responsabile$ gerente$ hoofd$ supervisor$ lead$ officer$"
    ),
    "SIGN": (
        "signature$ signing$ sign$ firma$ unterschrift zeichnung assinatura$ handtekening$ "
        "signatures$"
    ),
    "AUTH_ADJ": (
        "pre_signed$ presigned$ pre_cleared$ precleared$ authorised$ authorized$ entitled$ "
        "empowered$ permitted$ cleared$ berechtigt$ *berechtigt$ befugt$ ermachtigt$ "
        "autorise$ autorisee$ autorises$ habilite autorizado autorizada autorizados facultado "
        "facultada autorizzato autorizzata autorizzati abilitato abilitata habilitado "
        "habilitada bevoegd$ gemachtigd gerechtigd pre_approved$ preapproved$ "
        "vorab_genehmigt$ pre_approuve preaprobad pre_aprovad whitelisted$ allowlisted$"
    ),
    "BY": "by$ von$ vom$ par$ por$ da$ dal$ dalla$ dai$ door$ pelo$ pela$",
    "MEMBER": (
        "on$ among$ amongst$ part_of$ member_of$ auf$ unter$ sur$ dans$ parmi$ partie_des$ "
        "entre$ en$ tra$ fra$ in$ bij$ op$ tussen$ onder$"
    ),
    "LIST": (
        "admin_list$ admins_list$ admin_lijst$ admin_liste$ allowlist whitelist witte_lijst "
        "liste_blanche lista_blanca lista_bianca lista_branca positivliste freigabeliste "
        "ausnahmeliste exception_list$ break_glass signator signatair firmant firmatar "
        "signatari ondertekenaar unterzeichn zeichnungsberechtigte approver_list$ approvers$ "
        "list_of_approvers$ sudoers$ superusers$ admin_group$ admins_group$"
    ),
    "EXEMPT": (
        "excluded$ ausgeschlossen$ exclu$ exclue$ exclus$ excluido excluida escluso esclusa "
        "esclusi uitgesloten$ waiver$ waivers$ dispensation$ ausnahmegenehmigung derogation$ "
        "exencion$ deroga$ isencao$ ontheffing$ exempt excused$ waived$ ausgenommen$ befreit$ "
        "freigestellt$ dispense dispensad dispensat exento exenta exonerad esente esenti "
        "esonerat isento isenta vrijgesteld ontheven$ uitgezonderd$"
    ),
    "OVERRIDE": (
        "override overrule supersede trump outrank takes_precedence take_precedence prevail "
        "goes_above$ is_above$ hat_vorrang$ geht_vor$ sticht$ hebelt ersetzt$ prime$ "
        "prime_sur$ l'emporte$ esta_por_encima$ prevalec anula$ anulan$ vale_piu$ prevale "
        "scavalc annulla$ esta_acima_d fica_acima_d sobrepo gaat_voor$ gaat_boven$ "
        "heeft_voorrang$ overrul"
    ),
    "APPLY": (
        "apply$ applies$ gilt$ gelten$ s'applique s'appliquent aplica$ aplican$ vale$ "
        "valgono$ geldt$ gelden$"
    ),
    "TO_ME": "to_me$ for_me$ fur_mich$ a_moi$ a_mi$ per_me$ a_mim$ voor_mij$ para_mim$",
    # --- what may be done -----------------------------------------------------------------
    "MODAL": (
        "can$ may$ allowed$ able_to$ free_to$ darf$ darfst$ durfen$ kann$ kannst$ konnen$ "
        "peux$ peut$ pouvez$ peuvent$ puis$ puede$ puedes$ pueden$ puedo$ posso$ puoi$ puo$ "
        "possono$ podes$ pode$ podem$ mag$ mogen$ kan$ kun$ kunnen$"
    ),
    "APPROVE": (
        "approv sign_off signoff$ authoris authoriz release$ releases$ waive validat genehmig "
        "freigeb freizugeb absegn valide$ valider$ approuv autoris aprob aprueb autoriz "
        "approva approvar aprov goedkeur keur$ keuren$ goed_te_keuren$"
    ),
    "READ": (
        "read$ see$ view$ access$ open$ export download lesen$ einsehen$ sehen$ offnen$ "
        "exportier lire$ voir$ consulter$ ouvrir$ exporter$ leer$ ver$ consultar$ abrir$ "
        "exportar$ leggere$ vedere$ consultare$ aprire$ esportare$ ler$ lezen$ inzien$ "
        "bekijken$ openen$ exporteren$ zien$"
    ),
    "OWN": (
        "by_herself$ by_himself$ by_themselves$ by_myself$ on_my_own$ on_her_own$ on_his_own$ "
        "on_their_own$ single_handedly$ allein$ alleine$ eigenmachtig toute_seule$ tout_seul$ "
        "por_su_cuenta$ por_mi_cuenta$ por_si_solo$ da_solo$ da_sola$ da_soli$ sozinho$ "
        "sozinha$ por_conta_propria$ in_zijn_eentje$ in_haar_eentje$ in_mijn_eentje$ own$ "
        "eigen eigenen$ propre$ propres$ propio$ propia$ propios$ propias$ proprio$ propria$ "
        "proprie$ propri$ proprios$ proprias$ myself$ selbst$"
    ),
    "BREADTH": (
        "ensemble$ integralite$ insieme$ totalidad$ totalidade$ geheel$ all$ every$ "
        "everyone's$ any$ whole$ entire$ alle$ allen$ aller$ alles$ jede samtliche tous$ "
        "toutes$ tout$ n'_importe$ todo$ todos$ toda$ todas$ cualquier tutti$ tutte$ tutto$ "
        "qualsiasi$ qualunque$ ogni$ qualquer$ elk$ elke$ iedere$ ieder$"
    ),
    "GUARDED": (
        "fiche paie$ payslip gehaltsabrechnung lohnabrechnung nomina$ nominas$ busta_paga "
        "buste_paga recibo_de_vencimento loonstrook analis pacient pazient doente resultado "
        "risultat record file chart data$ database dossier akte *akten document report "
        "account case$ cases$ patient *patient customer client salar commission payroll "
        "mailbox email mail expediente historia cartell pratic processo processos ficha "
        "anagrafic klant gegevens *daten donnees datos dati dados figures$ zahlen$ cijfers$ "
        "results$ befund *befund resultat analys esami$ uitslag *uitslag *dossier tenant "
        "mandant comision provision commissie stipendi gehalt lohn loon"
    ),
    # --- controls and what weakens them ---------------------------------------------------
    "CONTROL": (
        "vetting$ vetted$ diligence$ security$ sicherheit seguridad$ sicurezza$ seguranca$ "
        "securite$ veiligheid$ change_form$ change_request$ change_management$ signed_form$ "
        "three_way_match$ 3_way_match$ two_way_match$ dual_approval$ due_diligence$ "
        "background_check$ anonymi anonimi anonymis anonimiz pseudonym masking$ redact "
        "anonymisier pseudonymisier confirm$ bestatig confirmer$ confirmar$ confermar "
        "maker_checker$ segregation_of_duties$ dual_control$ second_pair_of_eyes$ "
        "zweites_paar_augen$ segundo_par_de_ojos$ secondo_paio_di_occhi$ "
        "segundo_par_de_olhos$ tweede_paar_ogen$ branch_protection$ code_owners$ peer_review$ "
        "sanctions_screening$ screening$ conciliacion$ riconciliazion reconciliat abgleich$ "
        "sigilo$ secreto_profesional$ segreto_professionale$ secret_professionnel$ "
        "beroepsgeheim$ schweigepflicht$ confidentiality$ comprob pruf conservazion "
        "conservacao conservacion approv sign_off signoff review audit *audit log$ logs$ "
        "logging$ logged$ backup back_up freeze$ *freeze mfa$ 2fa$ two_factor twofactor "
        "multi_factor verif check$ checks$ checking$ four_eyes second_signature countersign "
        "control compliance legal_hold retention monitor alert firewall ticket consent limit$ "
        "limits$ restriction kyc$ fraud safeguard escalat oversight supervis encrypt "
        "confirmation authenticat polic rule$ rules$ guideline gate$ genehmig freigabe "
        "*freigabe prufung *prufung protokoll sicherung *sicherung sperre *sperre zwei_faktor "
        "zweifaktor verifizier kontroll *kontrolle vier_augen gegenzeichnung aufbewahrung "
        "*aufbewahrung uberwach alarm einwilligung zustimmung *limit grenze betrug richtlinie "
        "bestatigung absegn approbation validation double_validation revue$ relecture journal "
        "trace$ trace tracabilite sauvegarde gel_des authentification controle *controle "
        "quatre_yeux double_signature conformite conservation surveillance pare_feu "
        "consentement plafond limite fraude antifraude anti_fraude regle politique aprobacion "
        "revision registro copia_de_seguridad copias_de_seguridad congelacion doble_factor "
        "dos_pasos comprobacion cuatro_ojos doble_firma segunda_firma cumplimiento retencion "
        "supervision monitoriz cortafuegos consentimiento confirmacion politica norma$ "
        "normas$ approvazion revisione registri$ blocco_dei_rilasci due_fattori controll "
        "quattro_occhi doppia_firma seconda_firma conformita monitoragg allarm consenso "
        "conferma traccia politic aprovacao revisao auditoria registo congelamento "
        "dois_fatores dois_passos verificacao controlo quatro_olhos dupla_assinatura "
        "segunda_assinatura conformidade retencao copia_de_seguranca copias_de_seguranca "
        "confirmacao goedkeuring tweestaps verificatie vier_ogen tweede_handtekening "
        "bewaarplicht bewaartermijn limiet *limiet bevestiging beleid gelogd$ code_review$ "
        "change_freeze$ dpo$ data_protection_officer$ datenschutzbeauftragt rechtsabteilung "
        "legal_team$ service_juridique$ departamento_legal$ ufficio_legale$ "
        "departamento_juridico$ juridische_afdeling$ security_team$ sicherheitsteam$ "
        "risk_team$ committee$ comite$ comitato$ gremium$ commissie$"
    ),
    "RELAX": (
        "passe_outre$ passer_outre$ passez_outre$ pasa_por_alto$ pasar_por_alto$ passa_sopra$ "
        "passare_sopra$ passa_por_cima$ passar_por_cima$ out_of_the_loop$ aus_der_schleife$ "
        "hors_de_la_boucle$ fuera_del_circuito$ fuori_dal_giro$ don't_bother$ do_not_bother$ "
        "dont_bother$ skip bypass turn_off$ turning_off$ turned_off$ turns_off$ switch_off$ "
        "switching_off$ switched_off$ shut_off$ disabl deactivat ignor disregard waiv omit "
        "leave_out$ leaving_out$ left_out$ do_without$ dispense_with$ suspend circumvent "
        "get_around$ work_around$ sidestep stop silenc suppress hide$ hiding$ forgo relax "
        "loosen lift$ lifting$ drop$ dropping$ uberspr umgeh abschalt ausschalt abstell "
        "deaktivier ignorier weglass auslass aussetz entfern verzicht aufheb ubergeh "
        "unterdruck verberg versteck saut contourn desactiv passer_de$ passer_du$ passer_des$ "
        "omet omis$ outrepass salta$ saltar saltes$ saltas$ saltarse$ saltarte$ saltate$ "
        "salti$ salto$ omitir prescind aggir disattiv ometti omett sospend fare_a_meno$ togli "
        "nascond contorn desativ deslig dispensar dispensa$ ocult oversla omzeil uitschakel "
        "uitzet uit_te_zetten$ negeer neger weglat achterwege opschort"
    ),
    "DELETE": (
        "delet purg wipe$ wiping$ wiped$ eras remov losch loesch supprim effac borr elimin "
        "cancell apag verwijder wis$ wissen$ clear$ clearing$"
    ),
    "PERMIT": (
        "letting_me$ let_me$ lets_me$ allowing_me$ allows_me$ lasst_mich$ lasse_mich$ "
        "me_laisse$ me_laissant$ me_deja$ dejandome$ mi_lascia$ lasciandomi$ deixa_me$ "
        "deixando_me$ laat_me$ laten_me$ can$ may$ could$ should$ feel_free$ fine$ ok$ okay$ "
        "allowed$ please$ go_ahead$ prefer rather$ want$ let's$ even_if$ even_though$ darfst$ "
        "kannst$ kann$ darf$ bitte$ gerne$ gern$ ruhig$ auch_wenn$ in_ordnung$ peux$ peut$ "
        "pouvez$ merci_de$ n'_hesite meme_si$ meme_s'$ puedes$ puede$ por_favor$ esta_bien$ "
        "aunque$ aun_si$ puoi$ puo$ per_favore$ va_bene$ anche_se$ podes$ pode$ mesmo_que$ "
        "nao_faz_mal$ mag$ kun$ kan$ graag$ alsjeblieft$ gerust$ prima$ ook_als$ zelfs_als$"
    ),
    "NEED": (
        "as_plus_a$ a_plus_a$ avez_plus_a$ ont_plus_a$ as_pas_a$ a_pas_a$ avez_pas_a$ "
        "have_to$ has_to$ tienes_que$ tiene_que$ tens_de$ tem_de$ tem_que$ tens_que$ need "
        "needn't$ require requiring$ necessary$ brauch benotig notig$ erforderlich$ besoin$ "
        "necessaire$ requis$ falta$ necesit requier necesari serve$ bisogno$ richied "
        "necessari precis requer nodig$ hoef vereist$ musst$ muss$ mussen$"
    ),
    "NEEDLESS": (
        "noise$ pointless$ formality$ optional$ overkill$ red_tape$ bureaucracy$ "
        "bureaucratic$ useless$ formsache$ uberflussig$ formalite$ formalidad$ formalita$ "
        "formalidade$ formaliteit$ facultatif$ facoltativ opcional$ optioneel$ don't_have_to$ "
        "doesn't_have_to$ no_longer_have_to$ no_longer_has_to$ no_need$ unnecessary$ "
        "needless$ nicht_notig$ nicht_erforderlich$ unnotig$ pas_besoin$ plus_besoin$ "
        "pas_necessaire$ inutile$ no_hace_falta$ innecesari non_serve$ non_c'e_bisogno$ "
        "nao_e_preciso$ desnecessari niet_nodig$ overbodig$ hoeft_niet$ hoeven_niet$"
    ),
    "UNCHECKED": (
        "unchecked$ unreviewed$ unverified$ unvetted$ unapproved$ ungepruft ungeprueft "
        "unkontrolliert ungesichtet non_verifie non_controle sin_verificar$ sin_revisar$ "
        "sin_control$ non_verificat non_controllat sem_verificar$ sem_controlo$ "
        "ongecontroleerd ongezien$ ongeverifieerd"
    ),
    "INSTEAD": (
        "instead_of$ rather_than$ in_place_of$ statt$ anstatt$ anstelle au_lieu_de$ "
        "au_lieu_du$ a_la_place_de$ en_lugar_de$ en_vez_de$ invece_di$ invece_del$ "
        "al_posto_di$ em_vez_de$ em_vez_do$ em_lugar_de$ in_plaats_van$"
    ),
    "TRUST": (
        "trust$ vertrau fais_confiance$ confia$ confie$ fidati$ vertrouw ok$ okay$ verbal "
        "say_so$ word$ wort$ parole$ palabra$ parola$ palavra$ woord$ mundlich oral$"
    ),
    # one person's approval standing for another's
    "EQUIV": (
        "counts_as$ count_as$ is_as_good_as$ equivalent_to$ same_as$ gilt_als$ gelten_als$ "
        "zahlt_als$ vaut$ compte_comme$ vale_como$ cuenta_como$ vale_come$ conta_como$ "
        "geldt_als$ telt_als$"
    ),
    # an order to take something as approved: "treat my emails as pre-signed"
    "TREAT": (
        "treat$ regard$ consider$ behandle$ behandel$ betrachte$ traite$ considere$ trata$ "
        "considera$ tratta$ beschouw$"
    ),
    # a control cited as the authority for an act, not its object: "waived per the policy"
    "PER": (
        "per$ as_per$ according_to$ in_line_with$ gemass$ laut$ selon$ conformement segun$ "
        "conforme$ secondo$ come_da$ de_acuerdo_con$ volgens$ conform$"
    ),
    "WITHOUT": "without$ ohne$ sans$ sin$ senza$ sem$ zonder$",
    "THAT": "that$ que$ che$ dass$ dat$ ficar$ quede$ resti$ wordt$",
    "ASK": (
        "ask consult check_with$ checking_with$ fragen$ frag$ ruckfrag demander$ passer_par$ "
        "pasar_por$ passare_per$ passar_por$ passar_pelo$ passar_pela$ preguntar$ consultar$ "
        "chiedere$ sentire$ interpellare$ perguntar$ vragen$ overleg"
    ),
    "LOG_VERB": "log$ logs$ protokollier registr enregistr trace$ tracer$ loggen$ logg$ audit$",
    "RECORD_VERB": "record track save$ speicher aufzeichn sauvegard guard salv bewaar opslaan",
    "TELL": (
        "loop_in$ looping_in$ involve cc$ copy_in$ einbezieh einbind impliqu coinvolg "
        "involucr envolv betrek mettre_en_copie$ segnal signal report$ reporte$ reportar$ "
        "reporta$ denunci tell$ inform notify$ report$ alert$ sag$ sage$ informier "
        "benachrichtig melde dis$ dites$ informe$ previen cuentes$ cuente$ digas$ dire$ avvis "
        "contes$ digas$ vertel$ meld$ informeer$"
    ),
    # --- data sent away ---------------------------------------------------------------------
    "SEND": (
        "send forward email$ mail$ share sharing$ upload copy transfer schick sende$ senden$ "
        "weiterleit envoie$ envoyer$ envoyez$ envoi$ transf partag manda$ mandar$ mandame$ "
        "mande$ mandes$ envia$ enviar$ envie$ envies$ reenvi compart invia$ inviare$ inoltr "
        "condivid mandare$ stuur$ sturen$ doorstur deel$ delen$ mailen$"
    ),
    "OUTSIDE": (
        "personal personnel perso$ private privat prive$ privee$ priva$ privado privada "
        "pessoal personale gmail hotmail yahoo icloud proton outlook_com$ home_address "
        "external extern outside$ third_part dropbox wetransfer usb$ esterno esterna externo "
        "externa"
    ),
    # --- the agent, given rights or orders --------------------------------------------------
    "AGENT": (
        "ai$ ai_note$ note_to_ai$ ai_instruction$ assistant assistent asistente assistente "
        "the_ai$ an_ai$ ai_agent ai_system ai_model the_model$ das_modell$ le_modele$ "
        "el_modelo$ il_modello$ o_modelo$ het_model$ chatbot bot$ llm ki_agent ki_system "
        "agents_ia$ agent_ia$ agents_d'ia$ agentes_de_ia$ agente_de_ia$ agenti_ia$ agente_ia$ "
        "ai_agenten$ agents_reading$ agenten_die$ ki$ l'ia$ la_ia$ a_ia$ de_ia$ the_bot$ "
        "copilot$"
    ),
    "ORDER": (
        "from_here_on$ henceforth$ going_forward$ hereafter$ from_today$ ab_heute$ "
        "des_aujourd'hui$ a_partir_de_hoy$ da_oggi$ a_partir_de_hoje$ vanaf_nu$ "
        "vanaf_vandaag$ must$ should$ shall$ is_to$ from_now_on$ always$ soll$ sollen$ muss$ "
        "mussen$ ab_jetzt$ ab_sofort$ kunftig$ doit$ doivent$ desormais$ debe$ deben$ "
        "a_partir_de_ahora$ desde_ahora$ deve$ devono$ d'ora_in_poi$ devem$ "
        "a_partir_de_agora$ moet$ moeten$ voortaan$ may$ can$ darf$ durfen$ peut$ peuvent$ "
        "puede$ pueden$ puo$ possono$ pode$ podem$ mag$ mogen$ kan$ kunnen$"
    ),
    "GRANT": (
        "grant give$ gives$ giving$ assign add_me_to$ erteil gewahr vergib gib$ geben$ "
        "befordert accord donne$ donner$ octroi octroy conced otorg dale$ darle$ asign "
        "concedi dare$ assegn atribu geef$ geven$ toeken verleen"
    ),
    "PROMOTE": (
        "promov promoss gepromoveerd$ promot appoint ernannt befordert nomme$ nommee$ nombrad "
        "nombrado nominat nomead benoemd elevat upgrad"
    ),
    # --- occupations, not claims ------------------------------------------------------------
    "CREATE": (
        "create creat add$ make$ anlegen$ erstell erzeug creer$ cree$ crear$ crea$ creare$ "
        "criar$ cria$ aanmaken$ maak$ maken$"
    ),
    # a control kept, tightened or exercised: "always anonymise", "confirm with me first"
    "STRENGTHEN": (
        "always$ siempre$ toujours$ immer$ sempre$ altijd$ keep$ keeps$ continue$ make_sure$ "
        "ensure$ before$ bevor$ vorher$ avant$ antes$ prima$ voordat$ eerst$ first$ weiter$ "
        "continuer$ seguir$ continuare$ continuar$ blijf$ garde$ behalte"
    ),
    "WORKPLACE": (
        "at$ bei$ chez$ presso$ em$ numa$ num$ bij$ in$ for_a$ en$ dans$ a$ of_a$ of_an$ "
        "einer$ eines$ d'un$ d'une$ de_un$ de_una$ di_un$ di_una$ de_um$ de_uma$ van_een$"
    ),
    # Dutch and German verbs whose particle comes apart ("zet de controle uit")
    "SEPARABLE": (
        "zet:uit:RELAX zetten:uit:RELAX schakel:uit:RELAX schakelt:uit:RELAX sla:over:RELAX "
        "slaat:over:RELAX laat:weg:RELAX lass:weg:RELAX lasse:weg:RELAX schalte:ab:RELAX "
        "schalt:ab:RELAX schalte:aus:RELAX schalt:aus:RELAX stell:ab:RELAX stelle:ab:RELAX "
        "setze:aus:RELAX setz:aus:RELAX hebe:auf:RELAX heb:auf:RELAX leite:weiter:SEND "
        "leit:weiter:SEND schick:weiter:SEND stuur:door:SEND"
    ),
}
